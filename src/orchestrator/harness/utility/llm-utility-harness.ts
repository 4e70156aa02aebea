/**
 * The LLM-backed utility harness (opt-in; the default `UtilityHarness` is a stub): an LLM-assisted helper
 * outside the turn's phases. It knows one task, `title`: a title for the conversation so far.
 */
import { AgentHarnessError } from '../../../errors/index.js';
import {
  traceCall,
  type BoundLLMCaller,
  type Harness,
  type HarnessContext,
  type HarnessRunResult,
} from '../../types.js';
import type { UtilityInput, UtilityOutput } from '../lib/types.js';

/** Marker the scripted server's routes may match on. */
export const UTILITY_MARKER = '[assistant:utility]';

/** The LLM-backed utility harness: `new LlmUtilityHarness(bindModel(caller, config.models.utility))`. */
export class LlmUtilityHarness implements Harness<UtilityInput, UtilityOutput> {
  constructor(private readonly llm: BoundLLMCaller) {}

  /** Runs `input.task` (`title`); another task is CONFIG_INVALID. */
  async run(input: UtilityInput, ctx: HarnessContext): Promise<HarnessRunResult<UtilityOutput>> {
    if (input.task !== 'title')
      throw new AgentHarnessError(
        'CONFIG_INVALID',
        `LlmUtilityHarness knows the task "title", not ${JSON.stringify(input.task)}.`,
        { details: { task: input.task } },
      );
    const transcript = ctx.conversation.turns.map((t) => `${t.role}: ${t.text}`).join('\n');
    const response = await this.llm.call({
      messages: [
        { role: 'system', content: `${UTILITY_MARKER} Give the conversation a title of at most six words.` },
        { role: 'user', content: transcript || '(empty conversation)' },
      ],
      temperature: 0,
      ...(ctx.signal ? { signal: ctx.signal } : {}),
    });
    return {
      output: { task: 'title', text: response.text.trim() },
      done: true,
      trace: { calls: [traceCall(response)] },
    };
  }
}
