/**
 * Builds the consistency report from plain per-test records (no Vitest types here, so it is unit-testable and
 * identical for a live run and `--merge-reports`).
 */
import { engineIds } from '../engines/registry.js';
import {
  CONSISTENCY_REPORT_VERSION,
  ConsistencyReportSchema,
  type ConsistencyReport,
  type ConsistencyRow,
  type ConsistencyTest,
} from './schema.js';
import type { AgentHarnessTaskMeta } from './attempt-record.js';
import { type AcpConformanceEntry, buildAcpConformanceTable } from './acp-conformance.js';
import { buildFidelityTable } from './fidelity.js';
import { buildStatisticsSection, type StatisticsGates } from './statistics.js';
import type { TrialRecord } from '../evals/trial-record.js';
import type { TriggerRecord } from '../evals/trigger.js';

/** What the reporter extracts from one Vitest test case. */
export interface ReportInput {
  id: string;
  name: string;
  fullName: string;
  project: string;
  file: string;
  state: ConsistencyTest['state'];
  durationMs: number;
  retryCount: number;
  flaky: boolean;
  errors: string[];
  meta: AgentHarnessTaskMeta | undefined;
  /** Paths of the audit files attached to the test (absent when none). */
  attachments?: string[];
  /** The ACP checks the test reported (its task meta's `agentHarnessAcp`), if any. */
  acp?: AcpConformanceEntry | null;
  /** The trials the test ran (its task meta's `agentHarnessTrials`), if any. */
  trials?: TrialRecord[];
  /** The trigger evals the test ran (its task meta's `agentHarnessTriggers`), if any. */
  triggers?: TriggerRecord[];
}

const escapeRe = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** Engine named in a test's full name (a `' > '` segment or a bracketed/word token), or null. */
export function engineFromName(fullName: string): string | null {
  for (const id of engineIds())
    if (new RegExp(`(^|[^A-Za-z0-9_-])${escapeRe(id)}($|[^A-Za-z0-9_-])`).test(fullName)) return id;
  return null;
}

/** The case name of a test: its full name with the engine removed (segment, `[engine]`, `(engine)` or word). */
export function caseName(fullName: string, engine: string): string {
  const e = escapeRe(engine);
  const segments = fullName.split(' > ').filter((segment) => segment.trim() !== engine);
  return segments
    .map((segment) =>
      segment
        .replace(new RegExp(`\\s*[[(]${e}[\\])]`, 'g'), '')
        // `hello-file on codex` is the case `hello-file`, not `hello-file on`: a word that only led to the engine goes too.
        .replace(new RegExp(`(?:\\s+(?:on|in|with|for|via|using|under|through))?\\s+${e}$`, 'i'), '')
        .replace(new RegExp(`(^|[^A-Za-z0-9_-])${e}(?=$|[^A-Za-z0-9_-])`, 'g'), '$1')
        .replace(/\s{2,}/g, ' ')
        .replace(/^[\s:,/–-]+|[\s:,/–-]+$/g, ''),
    )
    .filter((segment) => segment !== '')
    .join(' > ');
}

/** Adds up per-attempt count records. */
export function sumCounts(records: readonly Record<string, number>[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const record of records) for (const [key, n] of Object.entries(record)) out[key] = (out[key] ?? 0) + n;
  return out;
}

function toTest(input: ReportInput): ConsistencyTest {
  const meta = input.meta;
  const attempts = meta?.attempts ?? [];
  const last = attempts.at(-1);
  const sum = (pick: (a: (typeof attempts)[number]) => number): number =>
    attempts.reduce((n, a) => n + (pick(a) || 0), 0);
  return {
    id: input.id,
    name: input.name,
    fullName: input.fullName,
    project: input.project,
    file: input.file,
    state: input.state,
    engine: meta?.engine ?? null,
    runId: meta?.runId ?? null,
    handle: meta?.handle ?? null,
    completion: last ? { state: last.completion.state, reason: last.completion.reason } : null,
    ...(meta ? { toolCalls: sum((a) => a.toolCalls ?? 0) } : {}),
    durationMs: Math.max(0, input.durationMs),
    retryCount: input.retryCount,
    flaky: input.flaky,
    attempts: attempts.length,
    diagnostics: sum((a) => a.fcmpCounts?.['diagnostic.warning'] ?? 0),
    errors: input.errors,
    auditDir: last?.auditDir ?? null,
    ...(input.attachments && input.attachments.length > 0 ? { attachments: input.attachments } : {}),
    ...(meta ? { fcmpCounts: sumCounts(attempts.map((a) => a.fcmpCounts ?? {})) } : {}),
    ...(last && last.engineVersion !== undefined ? { engineVersion: last.engineVersion } : {}),
    ...(last && last.engineVersionChecked != null ? { engineVersionChecked: last.engineVersionChecked } : {}),
    ...(last?.failureCode ? { failureCode: last.failureCode } : {}),
  };
}

/**
 * The engines the report holds more than one version of (merged reports of runs against the pinned and a newer
 * release, `npm run test:engines -- --latest`): their matrix columns are `<engine>@<version>`, so a case is compared
 * across versions as it is across engines.
 */
export function enginesWithSeveralVersions(tests: readonly ConsistencyTest[]): Set<string> {
  const versions = new Map<string, Set<string>>();
  for (const test of tests) {
    const engine = test.engine ?? engineFromName(test.fullName);
    if (!engine || !test.engineVersion) continue;
    versions.set(engine, (versions.get(engine) ?? new Set()).add(test.engineVersion));
  }
  return new Set([...versions].filter(([, seen]) => seen.size > 1).map(([engine]) => engine));
}

/** The matrix column of `test`: its engine, with `@<version>` when the report holds several versions of it. */
export function matrixColumn(engine: string, version: string | null | undefined, versioned: Set<string>): string {
  return versioned.has(engine) && version ? `${engine}@${version}` : engine;
}

function buildMatrix(tests: ConsistencyTest[]): ConsistencyRow[] {
  const rows = new Map<string, ConsistencyRow>();
  const versioned = enginesWithSeveralVersions(tests);
  for (const test of tests) {
    const engine = test.engine ?? engineFromName(test.fullName);
    if (!engine) continue;
    const name = caseName(test.fullName, engine);
    const key = `${test.project}\u0000${test.file}\u0000${name}`;
    const row = rows.get(key) ?? { case: name, file: test.file, project: test.project, engines: {}, disagree: false };
    row.engines[matrixColumn(engine, test.engineVersion, versioned)] = {
      testId: test.id,
      outcome: test.state,
      completion: test.completion?.state ?? null,
      auditDir: test.auditDir,
    };
    rows.set(key, row);
  }
  const out = [...rows.values()].filter((row) => Object.keys(row.engines).length > 1);
  for (const row of out) {
    const outcomes = new Set(
      Object.values(row.engines)
        .filter((c) => c.outcome !== 'skipped')
        .map((c) => c.outcome),
    );
    row.disagree = outcomes.size > 1;
  }
  return out;
}

/**
 * Builds and validates the report. Matrix rows only list cases run on two or more engines, or on two versions of one
 * engine (columns `<engine>@<version>`).
 */
export function buildConsistencyReport(
  inputs: readonly ReportInput[],
  reason: string,
  now: Date = new Date(),
  gates: StatisticsGates = {},
): ConsistencyReport {
  const tests = inputs.map(toTest);
  const matrix = buildMatrix(tests);
  const fidelity = buildFidelityTable(inputs.map((input) => input.meta));
  const acpConformance = buildAcpConformanceTable(inputs.map((input) => input.acp));
  const statistics = buildStatisticsSection(
    inputs.flatMap((input) => input.trials ?? []),
    inputs.flatMap((input) => input.triggers ?? []),
    gates,
  );
  const count = (state: ConsistencyTest['state']): number => tests.filter((t) => t.state === state).length;
  return ConsistencyReportSchema.parse({
    version: CONSISTENCY_REPORT_VERSION,
    generatedAt: now.toISOString(),
    reason,
    summary: {
      total: tests.length,
      passed: count('passed'),
      failed: count('failed'),
      skipped: count('skipped'),
      flaky: tests.filter((t) => t.flaky).length,
      disagreements: matrix.filter((r) => r.disagree).length,
    },
    tests,
    matrix,
    ...(fidelity.length > 0 ? { fidelity } : {}),
    ...(acpConformance.length > 0 ? { acpConformance } : {}),
    ...(statistics ? { statistics } : {}),
  });
}
