/**
 * What one trial leaves behind (JSON, in the test's `task.meta.agentHarnessTrials` and in a provider's or the CLI's
 * results): the case, engine and arm it belongs to, its outcome and classified cause, and the run it ran in. The
 * statistics are computed from these records alone, so a sharded run merged later gives the same numbers.
 */
import type { FailureClass } from './grade.js';

/** The arms a case can run in: the skill under test alone, no skill (the baseline), or every skill of the roots. */
export const ARMS = ['with-skill', 'baseline', 'all-skills'] as const;
/** An arm. */
export type Arm = (typeof ARMS)[number];

/** One trial's record. */
export interface TrialRecord {
  /** The case (by default the test's full name). */
  case: string;
  /** Engine id. */
  engine: string;
  /** The arm the trial ran in. */
  arm: Arm;
  /** Trial index, 0-based; trial i of two arms ran the same seed, so the two pair. */
  trial: number;
  /** The model script's seed this trial ran with (null: not scripted). */
  seed: number | null;
  /**
   * `passed` or `failed` count toward the pass rate; the failure classes other than `model` and `task` are counted
   * apart (an `infrastructure` trial is one whose retries all failed on the infrastructure).
   */
  outcome: 'passed' | 'failed' | 'excluded';
  /** Why it failed or was excluded (absent when it passed). */
  failureClass?: FailureClass;
  /** The stable code behind the failure, when one is known (`ENGINE_RATE_LIMITED`, `CASSETTE_MISS`, …). */
  failureCode?: string;
  /** What failed, in a sentence (the first failed expectation, or the engine's message). */
  reason?: string;
  /** Infrastructure failures retried before this outcome. */
  infraRetries: number;
  /** The k values of pass@k and pass^k the test asked for. */
  k?: number[];
  /** The grader score, when graders ran. */
  score?: number;
  /** Skills the engine loaded (its body was read or given), from the audit's tool calls. */
  skillsLoaded?: string[];
  /** The run of the trial's last attempt (null when no run was made). */
  runId: string | null;
  handle: string | null;
  auditDir: string | null;
  /** Runs of the infrastructure failures retried before it (their audit directories). */
  retriedAuditDirs?: string[];
  /** Cassette file, in a cassette mode. */
  cassette?: string;
  durationMs: number;
  /** Tokens the trial spent (input + output), null when the engine did not say. */
  tokens: number | null;
  /** Cost in USD, null when unknown (the scripted model costs nothing; the engines report none offline). */
  costUsd: number | null;
}

/** The key of the test meta the trials are written under (beside the fixture's `agentHarness`). */
export const TRIALS_META_KEY = 'agentHarnessTrials';

/** Reads the trial records of a task meta object (`task.meta` or `testCase.meta()`); [] when none. */
export function readTrialRecords(meta: unknown): TrialRecord[] {
  const value = meta && typeof meta === 'object' ? (meta as Record<string, unknown>)[TRIALS_META_KEY] : undefined;
  return Array.isArray(value) ? (value as TrialRecord[]) : [];
}

/** Appends trial records to a task meta object. */
export function appendTrialRecords(meta: object, records: readonly TrialRecord[]): void {
  const target = meta as Record<string, unknown>;
  target[TRIALS_META_KEY] = [...readTrialRecords(meta), ...records];
}
