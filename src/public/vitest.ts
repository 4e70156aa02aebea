/**
 * The Vitest integration of agent-harness (package entry `agent-harness/vitest`): the `agentHarness()`
 * plugin, the `test` with `harness`/`model`/`agent` fixtures, the agent matchers and their types.
 */
export { agentHarness, hasBlobReporter, hasAgentHarnessReporter } from '../vitest/plugin.js';
export { test, agentTest, defaultAgentHarnessConfig } from '../vitest/fixtures.js';
export type {
  AgentFixture,
  AgentHarnessFixtures,
  AgentStartOptions,
  HarnessFixture,
  ModelFixture,
} from '../vitest/fixtures.js';
export { installMatchers, agentMatchers, transcript, callUsesSkill } from '../vitest/matchers.js';
export type { AgentOutcomeLike, ToolCallPattern, ToolMatcher } from '../vitest/matchers.js';
export { HarnessRun, countFcmp, attemptRecord } from '../vitest/run.js';
export type { HarnessResumeOptions } from '../vitest/run.js';
export {
  AgentHarnessOptionsSchema,
  parseAgentHarnessOptions,
  toAgentHarnessConfig,
  DEFAULT_REPORT_DIR,
} from '../vitest/options.js';
export type { AgentHarnessOptions, AgentHarnessConfig, ResolvedAgentHarnessOptions } from '../vitest/options.js';
export { readAgentHarnessMeta, writeAgentHarnessMeta } from '../vitest/types.js';
export type { AgentHarnessTaskMeta, AgentHarnessAttemptRecord } from '../vitest/types.js';
export { turns } from '../model/index.js';
export type { ModelScript, ModelTurn } from '../model/index.js';
export {
  createWorkflowFixture,
  installWorkflowMatchers,
  workflowMatchers,
  formatEventLog,
} from '../vitest/workflow.js';
export type { WorkflowFixture, WorkflowRunOptions, WorkflowMatchers } from '../vitest/workflow.js';
export { TrialSet } from '../vitest/trials.js';
export type { AgentTrialsOptions, AgentTriggersOptions, TrialScript } from '../vitest/trials.js';
export { evalMatchers, installEvalMatchers } from '../vitest/eval-matchers.js';
export type { ArmGate } from '../vitest/eval-matchers.js';
export { vitestEvalsHarness, toVitestEvalsRun } from '../evals/vitest-evals.js';
export type {
  EvalHarness,
  EvalHarnessContext,
  EvalHarnessRun,
  EvalTranscriptEvent,
  VitestEvalsHarnessOptions,
} from '../evals/vitest-evals.js';
