/**
 * The gates of issue 45 as matchers over `agent.trials()`'s result: `toHavePassRate({ atLeast, confidence? })` (against
 * the Wilson interval's lower bound when a confidence is given) and `toShowLift({ atLeast?, confidence? })` (the
 * `with-skill` arm over `baseline`). A failure names the case, the engine, the arm and the bound.
 */
import { expect } from 'vitest';
import { checkLift, checkPassRate, type LiftGate, type PassRateGate } from '../evals/gates.js';
import type { TrialStatistics } from '../evals/summarize.js';
import type { Arm } from '../evals/trial-record.js';
import { AgentHarnessError } from '../errors/index.js';

/** A gate's options plus the arm it holds (default `with-skill`). */
export type ArmGate<G> = G & { arm?: Arm };

interface EvalMatchers<R = unknown> {
  /** The arm's pass rate (its 95% interval's lower bound with `confidence`) is at least `atLeast`. */
  toHavePassRate(gate: ArmGate<PassRateGate>): R;
  /** The arm's lift over the baseline arm (its interval's lower bound with `confidence`) is at least `atLeast` (0). */
  toShowLift(gate?: ArmGate<LiftGate>): R;
}

declare module 'vitest' {
  // biome-ignore lint/suspicious/noExplicitAny: the declaration merges with Vitest's own `Assertion<T = any>`
  interface Assertion<T = any> extends EvalMatchers<void> {}
  // eslint-disable-next-line @typescript-eslint/no-empty-object-type
  interface AsymmetricMatchersContaining extends EvalMatchers {}
}

/** The statistics rows of what `expect` was given: a trial set, its statistics, or one row. */
function rowsOf(received: unknown): TrialStatistics[] {
  const value = received as { statistics?: unknown } | null;
  if (value && typeof value === 'object' && Array.isArray(value.statistics))
    return value.statistics as TrialStatistics[];
  if (Array.isArray(received)) return received as TrialStatistics[];
  if (value && typeof value === 'object' && 'strip' in value) return [value as unknown as TrialStatistics];
  throw new AgentHarnessError(
    'CONFIG_INVALID',
    'toHavePassRate/toShowLift expect what agent.trials() returned (or its .statistics), not that value.',
    { details: { field: 'received' } },
  );
}

function rowOf(rows: TrialStatistics[], arm: Arm): TrialStatistics {
  const row = rows.find((r) => r.arm === arm);
  if (!row)
    throw new AgentHarnessError(
      'CONFIG_INVALID',
      `arm = ${JSON.stringify(arm)}: that arm did not run (ran: ${rows.map((r) => r.arm).join(', ') || 'none'}).`,
      { details: { field: 'arm' } },
    );
  return row;
}

/** The matcher implementations. */
export const evalMatchers = {
  toHavePassRate(received: unknown, gate: ArmGate<PassRateGate>) {
    const verdict = checkPassRate(rowOf(rowsOf(received), gate?.arm ?? 'with-skill'), gate);
    return { pass: verdict.pass, message: () => verdict.message };
  },
  toShowLift(received: unknown, gate: ArmGate<LiftGate> = {}) {
    const rows = rowsOf(received);
    const row = rowOf(rows, gate.arm ?? 'with-skill');
    const verdict = checkLift(
      row,
      rows.find((r) => r.arm === 'baseline'),
      gate,
    );
    return { pass: verdict.pass, message: () => verdict.message };
  },
};

let installed = false;

/** Installs the eval matchers on Vitest's `expect` (idempotent). */
export function installEvalMatchers(): void {
  if (installed) return;
  installed = true;
  expect.extend(evalMatchers);
}
