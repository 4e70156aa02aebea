/**
 * A scripted LLMCaller for unit tests: answers from a list or an (async) function of the call and records
 * every call; an async answer function can hold a call open, so a test can prove two calls were in flight.
 */
import { AgentHarnessError } from '../errors/index.js';
import type { LLMCallConfig, LLMCaller, LLMResponse } from './types.js';

/** One scripted answer: a text, or an error to reject with. */
export type ScriptedAnswer = string | Error;

/** A scripted caller and what it saw. */
export interface ScriptedCaller extends LLMCaller {
  /** Every call, in order. */
  readonly calls: LLMCallConfig[];
}

/** Options of {@link createScriptedCaller}. */
export interface ScriptedCallerOptions {
  /** Answers in order, or a function of the call and its 0-based index. */
  answers: ScriptedAnswer[] | ((call: LLMCallConfig, index: number) => ScriptedAnswer | Promise<ScriptedAnswer>);
}

/** Creates a scripted caller; past the end of a list it rejects with LLM_RESPONSE_INVALID. */
export function createScriptedCaller(options: ScriptedCallerOptions): ScriptedCaller {
  const calls: LLMCallConfig[] = [];
  return {
    calls,
    async call(input): Promise<LLMResponse> {
      const index = calls.length;
      calls.push(input);
      const answers = options.answers;
      const answer = typeof answers === 'function' ? await answers(input, index) : answers[index];
      if (answer === undefined)
        throw new AgentHarnessError(
          'LLM_RESPONSE_INVALID',
          `scripted caller has ${(answers as ScriptedAnswer[]).length} answers; call ${index + 1} has none.`,
        );
      if (answer instanceof Error) throw answer;
      return {
        text: answer,
        toolCalls: [],
        model: input.model,
        usage: { inputTokens: 1, outputTokens: 1 },
        latencyMs: 0,
        attempts: 1,
      };
    },
  };
}
