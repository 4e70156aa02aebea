/** Public entry `agent-harness/fluent`: defineHarness, wrapAgent, recordings. */
export { defineHarness, wrapAgent, resolveRecordingPath, readRecording, RecordingSchema, matchesEventFilter, computeBackoff } from '../fluent/index.js';
export type {
  AgentConstructor, ResolvedAgents, StepYield, ExecuteContext, HarnessConfig, HarnessResult, HarnessInstance, HarnessFactory, CreateOptions,
  HarnessEvent, HarnessEventHandler, HarnessEventType, RetryOptions, ParallelOptions, Recording, RecordingEntry, WrappedAgent,
} from '../fluent/index.js';
