/** The default utility harness: a stub (seed 004), a placeholder for LLM-assisted tools that calls no model. */
import type { Harness, HarnessRunResult } from '../../types.js';
import type { UtilityInput, UtilityOutput } from '../lib/types.js';

/** The stub utility harness; `LlmUtilityHarness` is the opt-in one (conversation titles). */
export class UtilityHarness implements Harness<UtilityInput, UtilityOutput> {
  /** Does nothing: `text` is null. */
  async run(input: UtilityInput): Promise<HarnessRunResult<UtilityOutput>> {
    return { output: { task: input.task, text: null }, done: true, trace: { calls: [], notes: { stub: true } } };
  }
}
