/**
 * Shared types of the Vitest integration: what the fixtures write into `task.meta.agentHarness` (and the
 * reporter reads back with `testCase.meta()`), and the `ProvidedContext` augmentation for `inject()`.
 *
 * `TaskMeta` is deliberately not augmented: in Vitest 4 it lives in `@vitest/runner`, in Vitest 5 in `vitest`,
 * and augmenting the wrong one is order-dependent (research note §8). Use {@link readAgentHarnessMeta} instead.
 */
import type { AgentHarnessTaskMeta } from '../report/attempt-record.js';
import type { AgentHarnessConfig } from './options.js';

export type { AgentHarnessAttemptRecord, AgentHarnessTaskMeta } from '../report/attempt-record.js';

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
