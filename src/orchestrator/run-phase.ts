/** Runs one harness as a phase: times it, fills its trace, and turns a throw into `HarnessRunResult.error`. */
import { toAgentHarnessError } from '../errors/index.js';
import type { Harness, HarnessContext, HarnessRunResult, HarnessTrace, PhaseResult } from './types.js';

/** Runs `harness` for `phase`; never throws. `fallback` is the output when the harness threw. */
export async function runPhase<TIn, TOut>(
  phase: string,
  harness: Harness<TIn, TOut>,
  input: TIn,
  ctx: HarnessContext,
  fallback: TOut,
): Promise<PhaseResult<TOut>> {
  const startedAt = ctx.now();
  const started = performance.now();
  let result: HarnessRunResult<TOut>;
  try {
    result = await harness.run(input, ctx);
  } catch (error) {
    result = { output: fallback, done: false, error: toAgentHarnessError(error) };
  }
  const trace: HarnessTrace = {
    calls: [],
    ...result.trace,
    phase,
    startedAt: startedAt.toISOString(),
    endedAt: ctx.now().toISOString(),
    latencyMs: Math.round(performance.now() - started),
  };
  return { ...result, trace };
}
