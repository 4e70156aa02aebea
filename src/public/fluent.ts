/** Public entry `agent-harness/fluent`: defineHarness, wrapAgent, typed events, narration, recordings. */
export {
  defineHarness, wrapAgent, attemptAgent, providerAgent, resolveRecordingPath, readRecording, RecordingSchema, matchesEventFilter, computeBackoff, formatEventLog,
  narrate, Monologue, narrateMethods, summarizeWith, describeCall, isHarnessEventType,
} from '../fluent/index.js';
export type {
  AgentConstructor, ResolvedAgents, StepYield, ExecuteContext, HarnessConfig, FluentRunResult, HarnessInstance, HarnessFactory, CreateOptions,
  HarnessEvent, HarnessEventHandler, HarnessEventType, HarnessEventName, HarnessEventFamily, HarnessEventOf, BaseEventData, FailedEventData,
  PhaseEvent, PhaseStartEvent, PhaseCompleteEvent, PhaseFailedEvent, TaskEvent, TaskStartEvent, TaskCompleteEvent, TaskFailedEvent,
  StepEvent, NarrativeEvent, ErrorEvent, RetryEvent, RetryStartEvent, RetryAttemptEvent, RetryBackoffEvent, RetrySuccessEvent, RetryFailureEvent,
  ParallelEvent, ParallelStartEvent, ParallelItemCompleteEvent, ParallelItemFailedEvent, ParallelCompleteEvent, ParallelFailedEvent,
  AgentEvent, AgentCallData, AgentStartEvent, AgentCompleteEvent, AgentFailedEvent, RunEvent, RunStartEvent, RunCompleteEvent, RunFailedEvent, CustomEvent,
  MonologueCall, MonologueOptions, MonologueSummarizer, NarrationCaller,
  RetryOptions, ParallelOptions, Recording, RecordingEntry, WrappedAgent, AttemptCallResult, AttemptAgentDefaults, AttemptScript, QueryableProvider, ProviderCallResult,
} from '../fluent/index.js';
