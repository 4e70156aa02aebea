/**
 * The fluent harness's events (seed 002) as one discriminated union: each `type` literal is exactly what is
 * emitted, each event carries the seed's fields plus `name` and `timestamp`. `.on(filter, handler)` is typed by
 * its filter: `'task'` hands the handler task events, `'retry:backoff'` that one event, `'*'` all of them.
 */

/** Fields every event has. */
export interface BaseEventData {
  /** What the event is about: the phase, task, retry, parallel or harness name; `agent.method` for agent calls. */
  name: string;
  /** When it was emitted. */
  timestamp: Date;
}

/** Fields of every failed/failure event. */
export interface FailedEventData {
  /** The error message (always present). */
  error: string;
  /** The error's stack, when it has one. */
  stack?: string;
  /** The original error, for programmatic handling (dropped from JSON event logs). */
  cause?: unknown;
}

/** `phase()` started. */
export interface PhaseStartEvent extends BaseEventData {
  type: 'phase:start';
  status: 'start';
  data?: Record<string, unknown>;
}
/** `phase()` finished; `result` is what its function returned. */
export interface PhaseCompleteEvent extends BaseEventData {
  type: 'phase:complete';
  status: 'complete';
  result?: unknown;
  data?: Record<string, unknown>;
}
/** `phase()`'s function threw (re-thrown after this event). */
export interface PhaseFailedEvent extends BaseEventData, FailedEventData {
  type: 'phase:failed';
  status: 'failed';
  data?: Record<string, unknown>;
}
/** Phase lifecycle events. */
export type PhaseEvent = PhaseStartEvent | PhaseCompleteEvent | PhaseFailedEvent;

/** `task()` started; `id` is the task id (also its `name`). */
export interface TaskStartEvent extends BaseEventData {
  type: 'task:start';
  id: string;
  status: 'start';
  data?: Record<string, unknown>;
}
/** `task()` finished. */
export interface TaskCompleteEvent extends BaseEventData {
  type: 'task:complete';
  id: string;
  status: 'complete';
  result?: unknown;
  data?: Record<string, unknown>;
}
/** `task()`'s function threw. */
export interface TaskFailedEvent extends BaseEventData, FailedEventData {
  type: 'task:failed';
  id: string;
  status: 'failed';
  data?: Record<string, unknown>;
}
/** Task lifecycle events. */
export type TaskEvent = TaskStartEvent | TaskCompleteEvent | TaskFailedEvent;

/** A step yielded by an `execute` generator (`name` is the step). */
export interface StepEvent extends BaseEventData {
  type: 'step';
  step: string;
  input: unknown;
  output: unknown;
}

/** An agent's narration (`narrate()` or `@Monologue`); `name` and `agent` are the agent's key in `agents`. */
export interface NarrativeEvent extends BaseEventData {
  type: 'narrative';
  agent: string;
  text: string;
  method?: string;
}

/** The run failed (before `run:failed`), or an `.on()` listener threw (the run goes on). */
export interface ErrorEvent extends BaseEventData {
  type: 'error';
  message: string;
  error: string;
  stack?: string;
  cause?: unknown;
}

/** `retry()` started. */
export interface RetryStartEvent extends BaseEventData {
  type: 'retry:start';
  maxAttempts: number;
}
/** One attempt of `retry()` begins. */
export interface RetryAttemptEvent extends BaseEventData {
  type: 'retry:attempt';
  attempt: number;
  maxAttempts: number;
}
/** An attempt failed; the next one starts after `delay` ms. */
export interface RetryBackoffEvent extends BaseEventData {
  type: 'retry:backoff';
  attempt: number;
  delay: number;
  error: string;
}
/** An attempt succeeded. */
export interface RetrySuccessEvent extends BaseEventData {
  type: 'retry:success';
  attempt: number;
  result?: unknown;
}
/** The last attempt failed (re-thrown after this event). */
export interface RetryFailureEvent extends BaseEventData, FailedEventData {
  type: 'retry:failure';
  attempts: number;
}
/** Retry lifecycle events. */
export type RetryEvent =
  | RetryStartEvent
  | RetryAttemptEvent
  | RetryBackoffEvent
  | RetrySuccessEvent
  | RetryFailureEvent;

/** `parallel()` started. */
export interface ParallelStartEvent extends BaseEventData {
  type: 'parallel:start';
  total: number;
  concurrency: number;
}
/** Item `index` finished; `completed` of `total` are done. */
export interface ParallelItemCompleteEvent extends BaseEventData {
  type: 'parallel:item:complete';
  index: number;
  completed: number;
  total: number;
}
/** Item `index` threw; no new item starts. */
export interface ParallelItemFailedEvent extends BaseEventData, FailedEventData {
  type: 'parallel:item:failed';
  index: number;
  total: number;
}
/** Every item finished; `result` in input order. */
export interface ParallelCompleteEvent extends BaseEventData {
  type: 'parallel:complete';
  total: number;
  result?: unknown[];
}
/** An item failed and the running ones settled (the first failure is re-thrown). */
export interface ParallelFailedEvent extends BaseEventData, FailedEventData {
  type: 'parallel:failed';
  total: number;
  completed: number;
}
/** Parallel lifecycle events. */
export type ParallelEvent =
  | ParallelStartEvent
  | ParallelItemCompleteEvent
  | ParallelItemFailedEvent
  | ParallelCompleteEvent
  | ParallelFailedEvent;

/** Fields of agent-call events; `name` is `agent.method`. */
export interface AgentCallData {
  /** The agent's key in `agents` (wrapAgent: the class name). */
  agent: string;
  method: string;
  /** True when the call was answered from a recording. */
  replayed?: boolean;
}
/** An agent method was called. */
export interface AgentStartEvent extends BaseEventData, AgentCallData {
  type: 'agent:start';
}
/** An agent method returned; `handle` links a provider/attempt-backed call to its audited run. */
export interface AgentCompleteEvent extends BaseEventData, AgentCallData {
  type: 'agent:complete';
  result?: unknown;
  handle?: string;
}
/** An agent method threw (or its promise rejected). */
export interface AgentFailedEvent extends BaseEventData, AgentCallData, FailedEventData {
  type: 'agent:failed';
}
/** Agent-call events. */
export type AgentEvent = AgentStartEvent | AgentCompleteEvent | AgentFailedEvent;

/** A harness run started (`name` is the harness name). */
export interface RunStartEvent extends BaseEventData {
  type: 'run:start';
  mode: 'live' | 'replay';
}
/** A harness run finished. */
export interface RunCompleteEvent extends BaseEventData {
  type: 'run:complete';
  result?: unknown;
  duration: number;
}
/** A harness run failed (after the `error` event). */
export interface RunFailedEvent extends BaseEventData, FailedEventData {
  type: 'run:failed';
  duration: number;
}
/** Run lifecycle events. */
export type RunEvent = RunStartEvent | RunCompleteEvent | RunFailedEvent;

/** An event from the `emit(type, data)` escape hatch: a type that is not built in becomes `custom:<type>`. */
export interface CustomEvent extends BaseEventData {
  type: `custom:${string}`;
  [key: string]: unknown;
}

/** Every event a harness emits. */
export type HarnessEvent =
  | PhaseEvent
  | TaskEvent
  | StepEvent
  | NarrativeEvent
  | ErrorEvent
  | RetryEvent
  | ParallelEvent
  | AgentEvent
  | RunEvent
  | CustomEvent;

/** The exact `type` of some event. */
export type HarnessEventName = HarnessEvent['type'];

type FamilyOf<T> = T extends `${infer F}:${string}` ? F : never;
/** Families `.on()` accepts: `'task'` selects `task:start`, `task:complete`, `task:failed`. */
export type HarnessEventFamily = FamilyOf<HarnessEventName> | 'parallel:item';

/** Filters accepted by `.on()`: `'*'`, a family, or an exact type. Anything else does not compile. */
export type HarnessEventType = '*' | HarnessEventFamily | HarnessEventName;

type Selected<M, F extends string> = M extends { type: infer T extends string }
  ? [F] extends [T]
    ? M
    : T extends `${F}:${string}`
      ? M
      : never
  : never;

/** The events a filter selects, e.g. `HarnessEventOf<'task'>` is `TaskEvent`. */
export type HarnessEventOf<F extends HarnessEventType> = F extends '*' ? HarnessEvent : Selected<HarnessEvent, F>;

/** Handler for `.on(filter, …)`, typed by the filter. A throwing handler does not stop the run (it becomes an `error` event). */
export type HarnessEventHandler<E extends HarnessEventType = '*'> = (event: HarnessEventOf<E>) => void;

/** The built-in event types; `emit()` passes these through and prefixes any other type with `custom:`. */
export const BUILT_IN_EVENT_TYPES: readonly Exclude<HarnessEventName, `custom:${string}`>[] = [
  'phase:start',
  'phase:complete',
  'phase:failed',
  'task:start',
  'task:complete',
  'task:failed',
  'step',
  'narrative',
  'error',
  'retry:start',
  'retry:attempt',
  'retry:backoff',
  'retry:success',
  'retry:failure',
  'parallel:start',
  'parallel:item:complete',
  'parallel:item:failed',
  'parallel:complete',
  'parallel:failed',
  'agent:start',
  'agent:complete',
  'agent:failed',
  'run:start',
  'run:complete',
  'run:failed',
];

/** The families, for validating `.on()` filters at run time (JavaScript callers). */
export const EVENT_FAMILIES: readonly HarnessEventFamily[] = [
  'phase',
  'task',
  'retry',
  'parallel',
  'parallel:item',
  'agent',
  'run',
  'custom',
];

/** True when `filter` is a filter `.on()` accepts. */
export function isHarnessEventType(filter: unknown): filter is HarnessEventType {
  if (typeof filter !== 'string') return false;
  return (
    filter === '*' ||
    (BUILT_IN_EVENT_TYPES as readonly string[]).includes(filter) ||
    (EVENT_FAMILIES as readonly string[]).includes(filter) ||
    /^custom:./.test(filter)
  );
}

/** The type an `emit(type, …)` call produces: built-in types as given, anything else as `custom:<type>`. */
export function customEventType(type: string): HarnessEventName {
  if ((BUILT_IN_EVENT_TYPES as readonly string[]).includes(type) || type.startsWith('custom:'))
    return type as HarnessEventName;
  return `custom:${type}`;
}
