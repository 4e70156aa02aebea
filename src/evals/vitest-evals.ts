/**
 * A [vitest-evals](https://www.npmjs.com/package/vitest-evals) harness over agent-harness (issue 45 item 8): a
 * `describeEval` suite runs the real CLI, contained and audited, for each `run(input)`, and gets back vitest-evals'
 * normalized run — `output` (the agent's last answer), `session.events` (the prompt, each tool call and its result,
 * the answers), `usage`, `errors` — plus the run's handle and audit directory as artifacts. Typed structurally
 * against vitest-evals 0.16's `Harness = { name, run(input, context) }` (`@vitest-evals/core`'s `HarnessRun`), so
 * agent-harness neither imports nor depends on it.
 */
import type { AttemptResult } from '../core/attempt-result.js';
import type { AttemptRequest } from '../core/attempt-request.js';
import type { HarnessPaths } from '../runtime/paths.js';

/** vitest-evals' JSON value. */
export type EvalJsonValue = string | number | boolean | null | EvalJsonValue[] | { [key: string]: EvalJsonValue };

/** One event of vitest-evals' transcript (`TranscriptEvent` of `@vitest-evals/core` 0.16). */
export type EvalTranscriptEvent =
  | { type: 'message'; role: 'system' | 'user' | 'assistant'; content?: EvalJsonValue }
  | { type: 'tool_call'; id: string; name: string; arguments?: Record<string, EvalJsonValue> }
  | {
      type: 'tool_result';
      toolCallId: string;
      name?: string;
      content?: EvalJsonValue;
      error?: { type?: string; message: string };
    };

/** vitest-evals' normalized run (`HarnessRun` of `@vitest-evals/core` 0.16), as this adapter fills it. */
export interface EvalHarnessRun {
  output: string | undefined;
  session: { events: EvalTranscriptEvent[]; provider?: string; metadata?: Record<string, EvalJsonValue> };
  usage: { provider?: string; inputTokens?: number; outputTokens?: number; totalTokens?: number; toolCalls?: number };
  timings?: { totalMs?: number };
  artifacts?: Record<string, EvalJsonValue>;
  errors: Array<Record<string, EvalJsonValue>>;
}

/** What vitest-evals passes a harness's `run` (`HarnessContext`). */
export interface EvalHarnessContext {
  signal?: AbortSignal;
  artifacts: Record<string, EvalJsonValue>;
  setArtifact: (name: string, value: EvalJsonValue) => void;
}

/** A vitest-evals `Harness` (`{ name, run }`). */
export interface EvalHarness<TInput> {
  name: string;
  run: (input: TInput, context: EvalHarnessContext) => Promise<EvalHarnessRun>;
}

/** Options of {@link vitestEvalsHarness}. */
export interface VitestEvalsHarnessOptions {
  /** The engine to run (`codex`, `claude`, …). */
  engine: string;
  /** The harness's name in vitest-evals' reports (default `agent-harness:<engine>`). */
  name?: string;
  /** Where runs go (default: `resolveHarnessPaths()` from the working directory and the environment). */
  paths?: HarnessPaths;
  /**
   * The rest of the attempt: model mode, script, cassette, workspace, skills, timeout… (`AttemptRequest` of
   * `agent-harness`); the prompt is the eval's input.
   */
  request?: Omit<Partial<AttemptRequest>, 'engine' | 'prompt' | 'paths' | 'signal'>;
}

function json(value: unknown): EvalJsonValue {
  if (value === undefined) return null;
  try {
    return JSON.parse(JSON.stringify(value)) as EvalJsonValue;
  } catch {
    return String(value);
  }
}

/** Maps an attempt to vitest-evals' normalized run: its tool calls (with their results) and answers, in order. */
export function toVitestEvalsRun(prompt: string, result: AttemptResult): EvalHarnessRun {
  const events: EvalTranscriptEvent[] = [{ type: 'message', role: 'user', content: prompt }];
  for (const call of result.toolCalls) {
    const args = json(call.input);
    events.push({
      type: 'tool_call',
      id: call.callId,
      name: call.name,
      ...(args && typeof args === 'object' && !Array.isArray(args) ? { arguments: args } : {}),
    });
    if (call.output !== null || call.status === 'failed')
      events.push({
        type: 'tool_result',
        toolCallId: call.callId,
        name: call.name,
        content: call.output,
        ...(call.status === 'failed' || (call.exitCode !== null && call.exitCode !== 0)
          ? {
              error: { type: 'tool_failed', message: `${call.name} ${call.status ?? ''} exit ${call.exitCode}`.trim() },
            }
          : {}),
      });
  }
  for (const text of result.assistantMessages) events.push({ type: 'message', role: 'assistant', content: text });
  const input = result.usage?.input_tokens ?? undefined;
  const output = result.usage?.output_tokens ?? undefined;
  const errors: Array<Record<string, EvalJsonValue>> = [];
  if (result.error) errors.push({ type: result.error.code, message: result.error.message });
  else if (result.completion.state !== 'completed')
    errors.push({
      type: result.completion.code ?? result.completion.state,
      message: `the attempt ended ${result.completion.state}${result.completion.reason ? ` (${result.completion.reason})` : ''}`,
    });
  return {
    output: result.assistantMessages.at(-1),
    session: {
      events,
      provider: result.engine,
      metadata: { runId: result.runId, handle: result.handle, completion: json(result.completion) },
    },
    usage: {
      provider: result.engine,
      ...(input !== undefined ? { inputTokens: input } : {}),
      ...(output !== undefined ? { outputTokens: output } : {}),
      ...(input !== undefined || output !== undefined ? { totalTokens: (input ?? 0) + (output ?? 0) } : {}),
      toolCalls: result.toolCalls.length,
    },
    timings: { totalMs: result.durationMs },
    artifacts: { runDir: result.runDir, auditDir: result.audit.dir, handle: result.handle },
    errors,
  };
}

/**
 * A vitest-evals harness that runs `engine` through agent-harness for each input (a prompt), contained and audited:
 * `describeEval('greets', { harness: vitestEvalsHarness({ engine: 'codex' }) }, (it) => …)`.
 */
export function vitestEvalsHarness(options: VitestEvalsHarnessOptions): EvalHarness<string> {
  return {
    name: options.name ?? `agent-harness:${options.engine}`,
    async run(input, context) {
      const { runAttempt } = await import('../core/run-attempt.js');
      const { resolveHarnessPaths } = await import('../runtime/paths.js');
      const result = await runAttempt({
        launch: 'start',
        modelMode: 'scripted',
        io: 'split',
        ...options.request,
        engine: options.engine,
        prompt: input,
        paths: options.paths ?? resolveHarnessPaths(),
        ...(context.signal ? { signal: context.signal } : {}),
      } as AttemptRequest);
      const run = toVitestEvalsRun(input, result);
      for (const [name, value] of Object.entries(run.artifacts ?? {})) context.setArtifact(name, value);
      return run;
    },
  };
}
