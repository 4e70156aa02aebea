/**
 * The LLM judge (issue 45): a grader that asks a model to grade a trial's transcript (from FCMP) and files against a
 * rubric, through an injected caller of the orchestrator (`createOpenAiChatCaller`, `createAnthropicMessagesCaller`,
 * or any `LLMCaller`). Its calls go wherever the caller points: at a judge cassette (`openJudgeCassette`) they are
 * recorded once and replayed keyless, so a replay re-judges identically. A judge that cannot grade (the caller
 * failed, the answer holds no score) throws JUDGE_FAILED, which `gradeTrial` counts apart, never as a pass or a fail.
 */
import fs from 'node:fs';
import path from 'node:path';
import { AgentHarnessError } from '../errors/index.js';
import type { BoundLLMCaller, ChatMessage, LLMCaller } from '../orchestrator/types.js';
import { isWithin } from '../runtime/path-within.js';
import type { Grade } from './grade.js';
import type { Grader } from './graders/grader.js';
import type { AgentOutcomeLike } from './graders/outcome.js';
import { fcmpTranscript } from './transcript.js';

/** Options of {@link llmJudge}. */
export interface JudgeOptions {
  /** The caller the judge asks (required): an orchestrator caller, bound (`bindModel`) or given `model`. */
  caller: LLMCaller | BoundLLMCaller;
  /** The model of each call; required with an unbound caller, else the bound caller's. */
  model?: string;
  /** What a good trial does, in plain words: the judge scores the trial against it. */
  rubric: string;
  /** Files of the run directory (relative paths) the judge reads with the transcript. */
  files?: readonly string[];
  /** Name of the grade (default `judge`). */
  name?: string;
  /** Weight in `gradeTrial` (default 1). */
  weight?: number;
  /** Most characters of the transcript sent (default 20 000, its end kept). */
  maxTranscriptChars?: number;
  /** Most characters of each file sent (default 10 000). */
  maxFileChars?: number;
}

/** The instruction every judge call starts with: the answer format the judge parses. */
export const JUDGE_SYSTEM_PROMPT =
  'You grade one run of a coding agent against a rubric. Read the rubric, the transcript and the files, then answer with only a JSON object: {"score": <a number from 0 to 1, 1 meaning the rubric is fully met>, "reason": "<one or two sentences>"}.';

function configInvalid(option: string, message: string): AgentHarnessError {
  return new AgentHarnessError('CONFIG_INVALID', `llmJudge: ${option} ${message}`, { details: { option } });
}

/** The file section of a judge prompt: each file's content, or that it is missing. */
function fileSection(outcome: AgentOutcomeLike, files: readonly string[], maxChars: number): string {
  return files
    .map((file) => {
      const root = outcome.runDir ? path.resolve(outcome.runDir) : null;
      const full = root ? path.resolve(root, file) : null;
      let body: string;
      if (!root || !full || !isWithin(full, root)) body = '(not readable: outside the run directory)';
      else {
        try {
          const text = fs.readFileSync(full, 'utf8');
          body = text.length <= maxChars ? text : `${text.slice(0, maxChars)}\n[…cut]`;
        } catch {
          body = '(missing: the file does not exist)';
        }
      }
      return `--- file ${file} ---\n${body}`;
    })
    .join('\n');
}

/** The messages of one judge call. */
export function judgeMessages(outcome: AgentOutcomeLike, options: JudgeOptions): ChatMessage[] {
  const transcript = fcmpTranscript(outcome.fcmp, options.maxTranscriptChars ?? 20_000);
  const files = options.files?.length
    ? `\n\nFiles:\n${fileSection(outcome, options.files, options.maxFileChars ?? 10_000)}`
    : '';
  return [
    { role: 'system', content: JUDGE_SYSTEM_PROMPT },
    {
      role: 'user',
      content: `Rubric:\n${options.rubric}\n\nTranscript:\n${transcript || '(no events)'}${files}`,
    },
  ];
}

/** The grade in a judge's answer: the first JSON object with a numeric `score` in [0, 1]; null when there is none. */
export function parseJudgeAnswer(answer: string): { score: number; reason: string } | null {
  const text = answer.slice(0, 20_000); // bounded: the search below is quadratic in the worst case
  for (let start = text.indexOf('{'); start >= 0; start = text.indexOf('{', start + 1)) {
    // The longest object from this start first: a reason may hold braces.
    for (let end = text.lastIndexOf('}'); end > start; end = text.lastIndexOf('}', end - 1)) {
      let value: unknown;
      try {
        value = JSON.parse(text.slice(start, end + 1));
      } catch {
        continue;
      }
      const { score, reason } = (value ?? {}) as { score?: unknown; reason?: unknown };
      if (typeof score === 'number' && score >= 0 && score <= 1)
        return { score, reason: typeof reason === 'string' ? reason : '' };
      break;
    }
  }
  return null;
}

/**
 * A grader that asks an LLM to score the trial against `rubric`. CONFIG_INVALID at once without a caller, with an
 * empty rubric, or with an unbound caller and no `model`; JUDGE_FAILED (thrown from `grade`) when the call fails or
 * the answer holds no score in [0, 1].
 */
export function llmJudge(options: JudgeOptions): Grader {
  if (!options || typeof options.caller?.call !== 'function')
    throw configInvalid(
      'caller',
      'is required: pass an orchestrator caller (createOpenAiChatCaller, createAnthropicMessagesCaller, or any { call(input) })',
    );
  if (typeof options.rubric !== 'string' || options.rubric.trim() === '')
    throw configInvalid('rubric', 'must be a non-empty string saying what a good trial does');
  const bound = (options.caller as BoundLLMCaller).model;
  const model = options.model ?? (typeof bound === 'string' ? bound : undefined);
  if (!model) throw configInvalid('model', 'is required with an unbound caller (or bind one with bindModel)');
  const name = options.name ?? 'judge';
  return {
    name,
    ...(options.weight !== undefined ? { weight: options.weight } : {}),
    async grade(outcome): Promise<Grade> {
      let text: string;
      try {
        const response = await options.caller.call({
          model,
          messages: judgeMessages(outcome, options),
          temperature: 0,
        });
        text = response.text;
      } catch (error) {
        throw new AgentHarnessError('JUDGE_FAILED', `judge ${name}: its caller failed: ${(error as Error).message}`, {
          cause: error,
        });
      }
      const parsed = parseJudgeAnswer(text);
      if (!parsed)
        throw new AgentHarnessError(
          'JUDGE_FAILED',
          `judge ${name}: its answer holds no JSON object with a score in [0, 1]: ${JSON.stringify(text.slice(0, 300))}`,
        );
      return { name, score: parsed.score, reason: parsed.reason };
    },
  };
}
