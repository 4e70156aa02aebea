/**
 * The statistics of trial records per case × engine × arm (issue 45 items 2 and 3): counts, pass rate with its Wilson
 * interval, pass@k and pass^k, flaky, duration, tokens and cost, the failures by class, and each arm's lift over the
 * baseline arm of the same case and engine. Pure: the same records in any order give the same rows (which is what
 * makes a sharded, merged run equal an unsharded one).
 */
import type { FailureClass } from './grade.js';
import { type McNemar, mcnemarExact, newcombeInterval } from './lift.js';
import { isFlaky, passAtK, passHatK, wilsonInterval } from './stats.js';
import type { Arm, TrialRecord } from './trial-record.js';

/** One failed or excluded trial as the report lists it. */
export interface TrialFailure {
  trial: number;
  failureClass: FailureClass;
  code?: string;
  reason?: string;
  auditDir: string | null;
  handle: string | null;
}

/** The lift of an arm over the baseline arm of the same case and engine. */
export interface LiftStatistics {
  /** The arm compared against (`baseline`). */
  vs: Arm;
  /** rate(arm) - rate(baseline). */
  diff: number;
  /** Newcombe's hybrid score interval of the difference at 95%. */
  ci95: [number, number];
  /** McNemar's exact test, when the two arms' counted trials pair by index (same seeds). */
  mcnemar?: McNemar;
}

/** The statistics of one case × engine × arm. */
export interface TrialStatistics {
  case: string;
  engine: string;
  arm: Arm;
  /** Trials counted toward the pass rate (passed + model and task failures). */
  n: number;
  passed: number;
  /** Trials whose every attempt failed on the infrastructure (after its retries): not counted. */
  infra_failed: number;
  /** Trials the engine itself failed (crash, protocol, timeout): not counted. */
  engine_failed: number;
  /** Trials a grader could not grade: not counted. */
  judge_errors: number;
  /** Infrastructure failures retried, over all trials. */
  infra_retries: number;
  /** passed / n (null when n = 0). */
  pass_rate: number | null;
  /** Wilson score interval of the pass rate at 95%. */
  ci95: [number, number];
  /** Unbiased pass@k by k (only the k <= n). */
  pass_at_k: Record<string, number>;
  /** Unbiased pass^k by k (only the k <= n). */
  pass_hat_k: Record<string, number>;
  /** 0 < passed < n. */
  flaky: boolean;
  /** Mean and total duration of the trials, ms. */
  duration_ms: { mean: number; total: number };
  /** Total tokens (null when no trial reported any). */
  tokens: number | null;
  /** Total cost in USD (null when no trial reported any). */
  cost_usd: number | null;
  /** Mean grader score, when graders ran. */
  mean_score?: number;
  /** Lift over the baseline arm (arms other than `baseline`, when a baseline ran). */
  lift?: LiftStatistics;
  /** Outcome of each trial by index, for the pass/fail strip: `P`ass, `F`ail, e`X`cluded. */
  strip: string;
  /** The failed and excluded trials with their classified cause and run. */
  failures: TrialFailure[];
}

/** Options of {@link summarizeTrials}. */
export interface SummarizeOptions {
  /** The k of pass@k and pass^k, added to the ones the records carry (default [1]). */
  k?: readonly number[];
}

const round = (x: number): number => Math.round(x * 1e6) / 1e6;

function keyOf(r: { case: string; engine: string; arm: string }): string {
  return `${r.case}\u0000${r.engine}\u0000${r.arm}`;
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function summarizeGroup(records: TrialRecord[], ks: readonly number[]): TrialStatistics {
  const first = records[0]!;
  const trials = [...records].sort((a, b) => a.trial - b.trial);
  const counted = trials.filter((t) => t.outcome !== 'excluded');
  const n = counted.length;
  const passed = counted.filter((t) => t.outcome === 'passed').length;
  const excluded = (cls: FailureClass) =>
    trials.filter((t) => t.outcome === 'excluded' && t.failureClass === cls).length;
  const interval = wilsonInterval(passed, n);
  const kSet = [...new Set([...ks, ...trials.flatMap((t) => t.k ?? [])])].filter((k) => k <= n).sort((a, b) => a - b);
  const totalMs = trials.reduce((s, t) => s + t.durationMs, 0);
  const withTokens = trials.filter((t) => t.tokens !== null);
  const withCost = trials.filter((t) => t.costUsd !== null);
  const scored = trials.filter((t) => typeof t.score === 'number');
  return {
    case: first.case,
    engine: first.engine,
    arm: first.arm,
    n,
    passed,
    infra_failed: excluded('infrastructure'),
    engine_failed: excluded('engine'),
    judge_errors: excluded('judge'),
    infra_retries: trials.reduce((s, t) => s + t.infraRetries, 0),
    pass_rate: n === 0 ? null : round(passed / n),
    ci95: [round(interval.low), round(interval.high)],
    pass_at_k: Object.fromEntries(kSet.map((k) => [String(k), round(passAtK(n, passed, k))])),
    pass_hat_k: Object.fromEntries(kSet.map((k) => [String(k), round(passHatK(n, passed, k))])),
    flaky: isFlaky(passed, n),
    duration_ms: { mean: trials.length ? Math.round(totalMs / trials.length) : 0, total: totalMs },
    tokens: withTokens.length ? withTokens.reduce((s, t) => s + (t.tokens ?? 0), 0) : null,
    cost_usd: withCost.length ? round(withCost.reduce((s, t) => s + (t.costUsd ?? 0), 0)) : null,
    ...(scored.length ? { mean_score: round(scored.reduce((s, t) => s + (t.score ?? 0), 0) / scored.length) } : {}),
    strip: trials.map((t) => (t.outcome === 'passed' ? 'P' : t.outcome === 'failed' ? 'F' : 'X')).join(''),
    failures: trials
      .filter((t) => t.outcome !== 'passed')
      .map((t) => ({
        trial: t.trial,
        failureClass: t.failureClass ?? 'task',
        ...(t.failureCode ? { code: t.failureCode } : {}),
        ...(t.reason ? { reason: t.reason } : {}),
        auditDir: t.auditDir,
        handle: t.handle,
      })),
  };
}

/** The lift of `arm` over `base`, paired (McNemar) when both counted the same trial indices. */
export function liftOf(arm: readonly TrialRecord[], base: readonly TrialRecord[]): LiftStatistics {
  const counted = (rs: readonly TrialRecord[]) => rs.filter((t) => t.outcome !== 'excluded');
  const a = counted(arm);
  const b = counted(base);
  const passes = (rs: TrialRecord[]) => rs.filter((t) => t.outcome === 'passed').length;
  const lift = newcombeInterval({ passes: passes(a), n: a.length }, { passes: passes(b), n: b.length });
  const byIndex = new Map(b.map((t) => [t.trial, t]));
  const paired =
    a.length > 0 &&
    a.length === b.length &&
    a.every((t) => byIndex.has(t.trial) && byIndex.get(t.trial)!.seed === t.seed && t.seed !== null);
  return {
    vs: 'baseline',
    diff: round(lift.diff),
    ci95: [round(lift.low), round(lift.high)],
    ...(paired
      ? {
          mcnemar: mcnemarExact(
            a.map((t) => [t.outcome === 'passed', byIndex.get(t.trial)!.outcome === 'passed'] as const),
          ),
        }
      : {}),
  };
}

/** The statistics of every case × engine × arm in `records`, sorted by case, engine, arm. */
export function summarizeTrials(records: readonly TrialRecord[], options: SummarizeOptions = {}): TrialStatistics[] {
  const ks = options.k ?? [1];
  const groups = new Map<string, TrialRecord[]>();
  for (const r of records) {
    const key = keyOf(r);
    const group = groups.get(key);
    if (group) group.push(r);
    else groups.set(key, [r]);
  }
  const rows = [...groups.entries()].sort(([a], [b]) => compare(a, b)).map(([, group]) => summarizeGroup(group, ks));
  for (const row of rows) {
    if (row.arm === 'baseline') continue;
    const base = groups.get(keyOf({ case: row.case, engine: row.engine, arm: 'baseline' }));
    if (base) row.lift = liftOf(groups.get(keyOf(row))!, base);
  }
  return rows;
}
