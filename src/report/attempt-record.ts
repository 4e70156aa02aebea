/**
 * What a test (or a CLI run) records of its attempts, and what the consistency report is built from. The Vitest
 * fixtures write it into `task.meta.agentHarness`; the CLI derives it from a run's conformance reports.
 */

/** One attempt as recorded in the test's meta (JSON-serialisable). */
export interface AgentHarnessAttemptRecord {
  runId: string;
  attempt: number;
  launch: 'start' | 'resume';
  exitCode: number | null;
  completion: { state: string; reason: string };
  fcmpCounts: Record<string, number>;
  auditDir: string;
  durationMs: number;
  usage: unknown;
  /** Number of tool calls the attempt made. */
  toolCalls: number;
  /** Vitest retry index the attempt belongs to (0 = first try). */
  retry: number;
  /** Version of the engine CLI (absent in records written before it was recorded). */
  engineVersion?: string | null;
  /** false: an engine version its adapter was not checked against (absent or null when unknown). */
  engineVersionChecked?: boolean | null;
  /** The failure code when the attempt failed. */
  failureCode?: string;
  /** The cassette the attempt recorded or replayed, and how its requests matched (cassette modes only). */
  cassette?: { mode: 'record' | 'replay'; exact: number; divergent: number; missed: number; unused: number };
}

/** `task.meta.agentHarness`: the last run of the test and every attempt across retries. */
export interface AgentHarnessTaskMeta {
  engine: string;
  runId: string;
  handle: string;
  sessionId: string | null;
  attempts: AgentHarnessAttemptRecord[];
}
