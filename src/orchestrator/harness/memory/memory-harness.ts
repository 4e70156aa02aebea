/** The default memory harness: a stub (seed 004), recalling nothing and calling no model. */
import type { Harness, HarnessRunResult } from '../../types.js';
import type { MemoryInput, MemoryOutput } from '../lib/types.js';

/** The stub memory harness; `LlmMemoryHarness` is the opt-in one that recalls and condenses. */
export class MemoryHarness implements Harness<MemoryInput, MemoryOutput> {
  /** Returns no memories. */
  async run(): Promise<HarnessRunResult<MemoryOutput>> {
    return { output: { memories: [], note: '' }, done: true, trace: { calls: [], notes: { stub: true } } };
  }
}
