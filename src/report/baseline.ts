/**
 * `report --baseline FILE`: the current consistency report against a saved one, per engine and case. A case that
 * now completes less, calls a different number of tools, emits different FCMP event counts, warns more, or is
 * missing is a regression (the command exits 1); a new engine version, an improvement or a new case is a change.
 */
import { caseName } from './build.js';
import { compareTrialStatistics } from '../evals/compare.js';
import type { TrialStatistics } from '../evals/summarize.js';
import type { ConsistencyReport, ConsistencyTest } from './schema.js';

/** What differs between a baseline and the current report. */
export interface BaselineDiff {
  regressions: string[];
  changes: string[];
}

const RANK: Record<string, number> = {
  completed: 3,
  awaiting_input: 2,
  no_session: 2,
  unknown: 1,
  interrupted: 0,
  failed: 0,
};

function byKey(report: ConsistencyReport): Map<string, ConsistencyTest> {
  const out = new Map<string, ConsistencyTest>();
  for (const test of report.tests) {
    if (!test.engine) continue;
    out.set(`${test.engine} · ${caseName(test.fullName, test.engine)}`, test);
  }
  return out;
}

/** Compares `current` with `baseline`. */
export function diffAgainstBaseline(current: ConsistencyReport, baseline: ConsistencyReport): BaselineDiff {
  const regressions: string[] = [];
  const changes: string[] = [];
  const now = byKey(current);
  const then = byKey(baseline);
  for (const [key, before] of then) {
    const after = now.get(key);
    if (!after) {
      regressions.push(`${key}: missing (was ${before.completion?.state ?? before.state})`);
      continue;
    }
    const was = before.completion?.state ?? 'unknown';
    const is = after.completion?.state ?? 'unknown';
    if (was !== is)
      ((RANK[is] ?? 0) < (RANK[was] ?? 0) ? regressions : changes).push(
        `${key}: completion ${was} → ${is}${after.failureCode ? ` (${after.failureCode})` : ''}`,
      );
    if ((before.toolCalls ?? 0) !== (after.toolCalls ?? 0))
      regressions.push(`${key}: tool calls ${before.toolCalls ?? 0} → ${after.toolCalls ?? 0}`);
    if (after.diagnostics > before.diagnostics)
      regressions.push(`${key}: diagnostics ${before.diagnostics} → ${after.diagnostics}`);
    else if (after.diagnostics < before.diagnostics)
      changes.push(`${key}: diagnostics ${before.diagnostics} → ${after.diagnostics}`);
    const types = new Set([...Object.keys(before.fcmpCounts ?? {}), ...Object.keys(after.fcmpCounts ?? {})]);
    for (const type of [...types].sort()) {
      if (type === 'diagnostic.warning') continue;
      const a = before.fcmpCounts?.[type] ?? 0;
      const b = after.fcmpCounts?.[type] ?? 0;
      if (a !== b) regressions.push(`${key}: FCMP ${type} ${a} → ${b}`);
    }
    if ((before.engineVersion ?? null) !== (after.engineVersion ?? null))
      changes.push(`${key}: engine version ${before.engineVersion ?? 'unknown'} → ${after.engineVersion ?? 'unknown'}`);
  }
  for (const key of now.keys()) if (!then.has(key)) changes.push(`${key}: new case`);
  // Trials: a pass rate that fell is a regression only when the fall is significant; a thin sample says so.
  for (const change of compareTrialStatistics(
    (baseline.statistics?.rows ?? []) as TrialStatistics[],
    (current.statistics?.rows ?? []) as TrialStatistics[],
  ))
    (change.verdict === 'regression' ? regressions : changes).push(`trials: ${change.message}`);
  return { regressions, changes };
}
