/** The public types of defineHarness (seed 002): agents, context, config, factory, instance, result. */
import type { AgentLike } from './agent-proxy.js';
import type { HarnessEvent, HarnessEventHandler, HarnessEventType } from './events.js';
import type { ParallelOptions, RetryOptions } from './helpers.js';

/** An agent class; any class with methods works (providers' adapters included). */
export type AgentConstructor = new () => AgentLike;
/** Agent constructors resolved to instances. */
export type ResolvedAgents<T extends Record<string, AgentConstructor>> = { [K in keyof T]: InstanceType<T[K]> };

/** A step yielded by an `execute` generator; recorded as a `step` event. */
export interface StepYield { step: string; input?: unknown; output?: unknown }

/** What `run`/`execute` receive. */
export interface ExecuteContext<TAgents extends Record<string, AgentConstructor>, TState> {
  agents: ResolvedAgents<TAgents>;
  state: TState;
  phase: <T>(name: string, fn: () => Promise<T>) => Promise<T>;
  task: <T>(id: string, fn: () => Promise<T>) => Promise<T>;
  emit: (type: string, data: Record<string, unknown>) => void;
  retry: <T>(name: string, fn: () => Promise<T>, options?: RetryOptions) => Promise<T>;
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
}

/** What `.run()` resolves to. */
export interface FluentRunResult<TState, TResult> { result: TResult; state: TState; events: HarnessEvent[]; duration: number }

/** A runnable instance with chainable subscriptions. */
export interface HarnessInstance<TState, TResult> {
  on: (type: HarnessEventType, handler: HarnessEventHandler) => HarnessInstance<TState, TResult>;
  run: () => Promise<FluentRunResult<TState, TResult>>;
  readonly state: TState;
}

/** Returned by defineHarness(). */
export interface HarnessFactory<TState, TInput, TResult> {
  readonly name: string;
  create: (input: TInput, options?: CreateOptions) => HarnessInstance<TState, TResult>;
}

/** Per-instance overrides of the definition's mode and recording path (the Vitest fixture sets them per test). */
export interface CreateOptions { mode?: 'live' | 'replay'; recording?: string }
