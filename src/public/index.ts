/**
 * The public API of agent-harness (package entry `agent-harness`).
 */
export { runAttempt, DEFAULT_ATTEMPT_TIMEOUT_MS } from '../core/run-attempt.js';
export type { AttemptRequest, AttemptReadyInfo, IoMode } from '../core/run-attempt.js';
export type { AttemptResult, ToolCallRecord } from '../core/attempt-result.js';
export type { AttemptAuditPaths } from '../core/audit-files.js';
export type { ExposeEntry } from '../runtime/isolation/mount-plan.js';
export { AgentHarnessError, ERROR_CODES, isAgentHarnessError } from '../errors/index.js';
export type { ErrorCode } from '../errors/index.js';
export {
  loadEngine,
  loadTranslationAdapter,
  availableEngines,
  engineIds,
  isEngineId,
  registerEngine,
} from '../engines/registry.js';
export type { EngineEntry } from '../engines/registry.js';
export type {
  EngineAdapter,
  EngineFacts,
  EngineParser,
  ErrorPattern,
  TranslationAdapter,
  WireApi,
} from '../engines/engine.js';
export type { EngineToolTable, ShellTool } from '../model/tool-table.js';
export { resolveHarnessPaths } from '../runtime/paths.js';
export type { HarnessPaths, ResolvePathsOptions } from '../runtime/paths.js';
export { listRuns, resolveRunSelector } from '../runtime/run-store.js';
export { injectSkills, DONE_MARKER, COMPLETION_CONTRACT } from '../runtime/skills.js';
export { loadModelScript, parseModelScript, turns, ModelScriptSchema } from '../model/index.js';
export { startModelServer } from '../engines/model-server.js';
export type { ModelLane, ModelScript, ModelServer } from '../model/index.js';
export * from '../protocol/index.js';
export {
  Orchestrator,
  RecordKeeper,
  bindModel,
  createOpenAiChatCaller,
  createAnthropicMessagesCaller,
  createScriptedCaller,
} from '../orchestrator/index.js';
export type {
  LLMCaller,
  LLMCallConfig,
  LLMResponse,
  Harness,
  HarnessContext,
  HarnessRunResult,
} from '../orchestrator/index.js';
export {
  getProvider,
  registerProvider,
  providerNames,
  createEngineProvider,
  AgentProviderConfigSchema,
  parseProviderConfig,
} from '../providers/index.js';
export type { AgentProvider, AgentProviderConfig, McpServerDef } from '../providers/index.js';
// Trajectories out (docs/export.md): ATIF from an attempt's events, its schema, and the export of a recorded attempt
// (the OTLP part loads the OpenTelemetry SDK only when asked for).
export { buildAtifTrajectory } from '../export/atif.js';
export type { AtifContext, AtifEvents } from '../export/atif.js';
export { ATIF_SCHEMA_VERSION, AtifTrajectorySchema } from '../export/atif-schema.js';
export type { AtifTrajectory, AtifStep, AtifToolCall } from '../export/atif-schema.js';
export { exportAttempt, EXPORT_FORMATS } from '../export/export-attempt.js';
export type { ExportFormat, ExportedDocument } from '../export/export-attempt.js';
// Evals (docs/evals.md): trial statistics, lift, trigger evals, gates and run comparison, as pure functions.
export * from '../evals/index.js';
// Graders and judges (docs/graders.md), imported as a namespace so grader names never clash with the rest.
export * as graders from '../evals/graders/index.js';
export { gradeTrial, llmJudge, openJudgeCassette } from '../evals/graders/index.js';
export type { Grade, GradeError, GradedTrial, Grader, JudgeOptions } from '../evals/graders/index.js';
