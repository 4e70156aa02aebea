/**
 * Comparing two runs' statistics (`agent-harness report --baseline`, issue 45 item 5): a case × engine × arm whose pass
 * rate fell is a regression only when the fall is statistically significant (Newcombe's interval of the difference
 * lies wholly below 0); otherwise the verdict says the evidence is too thin to tell, and how many trials it rests on.
 */
import { newcombeInterval } from './lift.js';
import type { TrialStatistics } from './summarize.js';

/** One row of the comparison. */
export interface RateChange {
  case: string;
  engine: string;
  arm: string;
  before: { passed: number; n: number };
  after: { passed: number; n: number };
  /** after - before, with its 95% interval. */
  diff: number;
  ci95: [number, number];
  /** `regression` (significant fall), `improvement` (significant rise), `unchanged` (interval spans 0 narrowly), `too-thin`. */
  verdict: 'regression' | 'improvement' | 'unchanged' | 'too-thin';
  /** What to tell the user. */
  message: string;
}

const pct = (x: number): string => `${(x * 100).toFixed(1)}%`;

/** An interval wider than this (in rate) cannot rule out a change that matters: the evidence is too thin. */
export const THIN_EVIDENCE_WIDTH = 0.5;

/** Compares the rows both runs have. */
export function compareTrialStatistics(
  before: readonly TrialStatistics[],
  after: readonly TrialStatistics[],
): RateChange[] {
  const key = (s: TrialStatistics) => `${s.case}\u0000${s.engine}\u0000${s.arm}`;
  const old = new Map(before.map((s) => [key(s), s]));
  const changes: RateChange[] = [];
  for (const now of after) {
    const was = old.get(key(now));
    if (!was) continue;
    const lift = newcombeInterval({ passes: now.passed, n: now.n }, { passes: was.passed, n: was.n });
    const where = `case "${now.case}" on ${now.engine} (arm ${now.arm})`;
    const counts = `${was.passed}/${was.n} → ${now.passed}/${now.n}`;
    const verdict: RateChange['verdict'] =
      lift.high < 0
        ? 'regression'
        : lift.low > 0
          ? 'improvement'
          : lift.high - lift.low > THIN_EVIDENCE_WIDTH
            ? 'too-thin'
            : 'unchanged';
    const message =
      verdict === 'regression'
        ? `${where}: pass rate fell ${pct(-lift.diff)} (${counts}), significant at 95% (interval ${pct(lift.low)}–${pct(lift.high)})`
        : verdict === 'improvement'
          ? `${where}: pass rate rose ${pct(lift.diff)} (${counts}), significant at 95%`
          : verdict === 'too-thin'
            ? `${where}: ${counts}; the evidence is too thin to tell (the 95% interval of the change is ${pct(lift.low)}–${pct(lift.high)}): run more trials`
            : `${where}: ${counts}; no significant change (interval ${pct(lift.low)}–${pct(lift.high)})`;
    changes.push({
      case: now.case,
      engine: now.engine,
      arm: now.arm,
      before: { passed: was.passed, n: was.n },
      after: { passed: now.passed, n: now.n },
      diff: lift.diff,
      ci95: [lift.low, lift.high],
      verdict,
      message,
    });
  }
  return changes;
}
