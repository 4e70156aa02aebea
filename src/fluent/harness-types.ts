/** The public types of defineHarness (seed 002): agents, context, config, factory, instance, result. */
import type { HarnessEvent, HarnessEventHandler, HarnessEventType } from './event-types.js';
import type { ParallelOptions, RetryOptions } from './helpers.js';
import type { MonologueSummarizer } from './narration.js';

/**
 * An agent class: constructible without arguments, its instances have an `execute` method (a class without one
 * does not compile, and is CONFIG_INVALID at run time). Other methods are called through the harness too.
 */
export type AgentConstructor = new () => { execute: (...args: never[]) => unknown };
/** Agent constructors resolved to instances. */
export type ResolvedAgents<T extends Record<string, AgentConstructor>> = { [K in keyof T]: InstanceType<T[K]> };

/** A step yielded by an `execute` generator; recorded as a `step` event. */
export interface StepYield {
  step: string;
  input?: unknown;
  output?: unknown;
}

/** What `run`/`execute` receive. */
export interface ExecuteContext<TAgents extends Record<string, AgentConstructor>, TState> {
  /** Resolved agent instances; each method keeps its signature (a synchronous one returns its value). */
  agents: ResolvedAgents<TAgents>;
  /** Mutable state. */
  state: TState;
  /** Wraps work in `phase:start` and `phase:complete` / `phase:failed`. */
  phase: <T>(name: string, fn: () => Promise<T>) => Promise<T>;
  /** Wraps work in `task:start` and `task:complete` / `task:failed` (with `id`). */
  task: <T>(id: string, fn: () => Promise<T>) => Promise<T>;
  /** Escape hatch: a built-in type is emitted as given, any other as `custom:<type>`; `name` defaults to the type. */
  emit: (type: string, data: Record<string, unknown>) => void;
  /** Retries with capped exponential backoff, emitting `retry:*`. */
  retry: <T>(name: string, fn: () => Promise<T>, options?: RetryOptions) => Promise<T>;
  /** Runs functions with bounded concurrency, emitting `parallel:*`. */
  parallel: <T>(name: string, fns: Array<() => Promise<T>>, options?: ParallelOptions) => Promise<T[]>;
}

/** Configuration of defineHarness(); `run` and `execute` are mutually exclusive and one is required. */
export interface HarnessConfig<TAgents extends Record<string, AgentConstructor>, TState, TInput, TResult> {
  name?: string;
  mode?: 'live' | 'replay';
  agents: TAgents;
  state?: (input: TInput) => TState;
  run?: (context: ExecuteContext<TAgents, TState>, input: TInput) => Promise<TResult>;
  execute?: (context: ExecuteContext<TAgents, TState>) => AsyncGenerator<StepYield, TResult>;
  /** Recording file: written in live mode (when given), required and read in replay mode. */
  recording?: string;
  /** Narration: the summarizer `@Monologue()` methods use when they name none (e.g. `summarizeWith(llmCaller)`). */
  monologue?: { summarize?: MonologueSummarizer };
}

/** What `.run()` resolves to. */
export interface FluentRunResult<TState, TResult> {
  result: TResult;
  state: TState;
  events: HarnessEvent[];
  duration: number;
}

/** A runnable instance with chainable subscriptions. */
export interface HarnessInstance<TState, TResult> {
  /** Subscribes to the events `type` selects (`'*'`, a family such as `'task'`, or an exact type); chainable. */
  on: <E extends HarnessEventType>(type: E, handler: HarnessEventHandler<E>) => HarnessInstance<TState, TResult>;
  run: () => Promise<FluentRunResult<TState, TResult>>;
  readonly state: TState;
}

/** Returned by defineHarness(). */
export interface HarnessFactory<TState, TInput, TResult> {
  readonly name: string;
  create: (input: TInput, options?: CreateOptions) => HarnessInstance<TState, TResult>;
}

/** Per-instance overrides of the definition's mode and recording path (the Vitest fixture sets them per test). */
export interface CreateOptions {
  mode?: 'live' | 'replay';
  recording?: string;
}
