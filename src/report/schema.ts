/**
 * Schema of `consistency.json`, the machine-readable report the {@link AgentHarnessReporter} writes at the
 * end of a run (also after `--merge-reports`).
 */
import * as z from 'zod';
import { AcpConformanceRowSchema } from './acp-conformance.js';
import { FidelityRowSchema } from './fidelity.js';
import { StatisticsSectionSchema } from './statistics.js';

/** Version tag of the consistency report. */
export const CONSISTENCY_REPORT_VERSION = 'agent-harness.consistency/1';

/** One test of the run. Engine fields are null for tests that started no agent. */
export const ConsistencyTestSchema = z.object({
  id: z.string(),
  name: z.string(),
  fullName: z.string(),
  project: z.string(),
  file: z.string(),
  state: z.enum(['passed', 'failed', 'skipped', 'pending']),
  engine: z.string().nullable(),
  runId: z.string().nullable(),
  handle: z.string().nullable(),
  completion: z.object({ state: z.string(), reason: z.string() }).nullable(),
  toolCalls: z.number().int().nonnegative().optional(),
  durationMs: z.number().nonnegative(),
  retryCount: z.number().int().nonnegative(),
  flaky: z.boolean(),
  attempts: z.number().int().nonnegative(),
  diagnostics: z.number().int().nonnegative(),
  errors: z.array(z.string()),
  auditDir: z.string().nullable(),
  /** Audit files attached to the test by the agent fixture (fcmp and meta of each attempt). */
  attachments: z.array(z.string()).optional(),
  /** FCMP event counts over the test's attempts (for baselines). */
  fcmpCounts: z.record(z.string(), z.number().int().nonnegative()).optional(),
  /** Version of the engine CLI the last attempt ran. */
  engineVersion: z.string().nullable().optional(),
  /** false: the last attempt ran an engine version its adapter was not checked against. */
  engineVersionChecked: z.boolean().nullable().optional(),
  /** The last attempt's failure code, when it failed (`ENGINE_RATE_LIMITED`, …). */
  failureCode: z.string().optional(),
});
/** One test of the report. */
export type ConsistencyTest = z.infer<typeof ConsistencyTestSchema>;

/** One engine's cell of a matrix row. */
export const ConsistencyCellSchema = z.object({
  testId: z.string(),
  outcome: z.enum(['passed', 'failed', 'skipped', 'pending']),
  completion: z.string().nullable(),
  auditDir: z.string().nullable(),
});
/** One matrix cell. */
export type ConsistencyCell = z.infer<typeof ConsistencyCellSchema>;

/** One case run on several engines: engine → outcome; `disagree` when the (non-skipped) outcomes differ. */
export const ConsistencyRowSchema = z.object({
  case: z.string(),
  file: z.string(),
  project: z.string(),
  engines: z.record(z.string(), ConsistencyCellSchema),
  disagree: z.boolean(),
});
/** One matrix row. */
export type ConsistencyRow = z.infer<typeof ConsistencyRowSchema>;

/** The whole report. */
export const ConsistencyReportSchema = z.object({
  version: z.literal(CONSISTENCY_REPORT_VERSION),
  generatedAt: z.string(),
  reason: z.string(),
  summary: z.object({
    total: z.number().int(),
    passed: z.number().int(),
    failed: z.number().int(),
    skipped: z.number().int(),
    flaky: z.number().int(),
    disagreements: z.number().int(),
  }),
  tests: z.array(ConsistencyTestSchema),
  matrix: z.array(ConsistencyRowSchema),
  /** Cassette fidelity per engine (present when some attempt recorded or replayed a cassette). */
  fidelity: z.array(FidelityRowSchema).optional(),
  /** ACP against native per engine (present when some test reported ACP checks: src/report/acp-conformance.ts). */
  acpConformance: z.array(AcpConformanceRowSchema).optional(),
  /** Trial statistics per case × engine × arm, trigger evals and gates (present when some test ran trials: docs/evals.md). */
  statistics: StatisticsSectionSchema.optional(),
});
/** The consistency report. */
export type ConsistencyReport = z.infer<typeof ConsistencyReportSchema>;
