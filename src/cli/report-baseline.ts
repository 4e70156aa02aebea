/**
 * `report --baseline`: what changed per engine and case between a saved consistency.json and now. A changed
 * completion, tool-call count or diagnostic count, or a case that disappeared, is a regression.
 */
import fs from 'node:fs';
import { AgentHarnessError } from '../errors/index.js';
import { ConsistencyReportSchema, type ConsistencyReport, type ConsistencyTest } from '../vitest/report-schema.js';

/** Reads and validates a saved consistency.json; CONFIG_INVALID names the file when it is not one. */
export function readBaseline(file: string): ConsistencyReport {
  let raw: unknown;
  try {
    raw = JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch (cause) {
    throw new AgentHarnessError('CONFIG_INVALID', `--baseline ${file} cannot be read as JSON: ${(cause as Error).message}`, { cause, details: { file } });
  }
  const parsed = ConsistencyReportSchema.safeParse(raw);
  if (!parsed.success) {
    throw new AgentHarnessError('CONFIG_INVALID', `--baseline ${file} is not a consistency.json: ${parsed.error.issues[0]?.message ?? 'invalid'}`, { details: { file } });
  }
  return parsed.data;
}

const keyOf = (test: ConsistencyTest): string => `${test.engine ?? '?'} / ${test.name}`;

/** Lines describing each regression of `current` against `baseline` (empty when none). */
export function diffAgainstBaseline(baseline: ConsistencyReport, current: ConsistencyReport): string[] {
  // The newest test per engine and case wins: re-runs of the same case replace older ones.
  const index = (report: ConsistencyReport): Map<string, ConsistencyTest> => new Map(report.tests.filter((t) => t.engine).map((t) => [keyOf(t), t]));
  const before = index(baseline);
  const after = index(current);
  const changes: string[] = [];
  for (const [key, old] of before) {
    const now = after.get(key);
    if (!now) {
      changes.push(`${key}: missing (was ${old.completion?.state ?? old.state})`);
      continue;
    }
    const oldCompletion = old.completion ? `${old.completion.state} (${old.completion.reason})` : 'none';
    const newCompletion = now.completion ? `${now.completion.state} (${now.completion.reason})` : 'none';
    if (oldCompletion !== newCompletion) changes.push(`${key}: completion ${oldCompletion} → ${newCompletion}`);
    if ((old.toolCalls ?? 0) !== (now.toolCalls ?? 0)) changes.push(`${key}: tool calls ${old.toolCalls ?? 0} → ${now.toolCalls ?? 0}`);
    if (old.diagnostics !== now.diagnostics) changes.push(`${key}: diagnostics ${old.diagnostics} → ${now.diagnostics}`);
  }
  return changes;
}
