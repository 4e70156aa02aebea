/**
 * Shared types of the Vitest integration: what the fixtures write into `task.meta.agentHarness` (and the
 * reporter reads back with `testCase.meta()`), and the `ProvidedContext` augmentation for `inject()`.
 *
 * `TaskMeta` is deliberately not augmented: in Vitest 4 it lives in `@vitest/runner`, in Vitest 5 in `vitest`,
 * and augmenting the wrong one is order-dependent (research note §8). Use {@link readAgentHarnessMeta} instead.
 */
import type { AgentHarnessConfig } from './options.js';

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
  /** The failure code when the attempt failed. */
  failureCode?: string;
}

/** `task.meta.agentHarness`: the last run of the test and every attempt across retries. */
export interface AgentHarnessTaskMeta {
  engine: string;
  runId: string;
  handle: string;
  sessionId: string | null;
  attempts: AgentHarnessAttemptRecord[];
}

/** Reads `agentHarness` from a task meta object (`task.meta` or `testCase.meta()`), or undefined. */
export function readAgentHarnessMeta(meta: unknown): AgentHarnessTaskMeta | undefined {
  const value = meta && typeof meta === 'object' ? (meta as { agentHarness?: unknown }).agentHarness : undefined;
  return value && typeof value === 'object' ? (value as AgentHarnessTaskMeta) : undefined;
}

/** Writes `agentHarness` into a task meta object. */
export function writeAgentHarnessMeta(meta: object, value: AgentHarnessTaskMeta): void {
  (meta as { agentHarness?: AgentHarnessTaskMeta }).agentHarness = value;
}

declare module 'vitest' {
  interface ProvidedContext {
    /** Config of the agentHarness() plugin; undefined when the plugin is not configured for the project. */
    agentHarness: AgentHarnessConfig | undefined;
  }
}
