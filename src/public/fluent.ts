/** Public entry `agent-harness/fluent`: defineHarness, wrapAgent, recordings. */
export { defineHarness, wrapAgent, attemptAgent, providerAgent, resolveRecordingPath, readRecording, RecordingSchema, matchesEventFilter, computeBackoff, formatEventLog } from '../fluent/index.js';
export type {
  AgentConstructor, ResolvedAgents, StepYield, ExecuteContext, HarnessConfig, FluentRunResult, HarnessInstance, HarnessFactory, CreateOptions,
  HarnessEvent, HarnessEventHandler, HarnessEventType, RetryOptions, ParallelOptions, Recording, RecordingEntry, WrappedAgent, AttemptCallResult, AttemptAgentDefaults, QueryableProvider, ProviderCallResult,
} from '../fluent/index.js';
