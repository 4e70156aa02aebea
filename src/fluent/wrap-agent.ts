/** wrapAgent (seed 002 level 1): one agent, its `execute` wrapped in agent:start/complete/failed events. */
import { EventBus, type HarnessEventHandler, type HarnessEventType } from './events.js';
import { wrapWithEvents } from './helpers.js';

/** A class whose instances have an `execute` method. */
export type ExecutableAgentConstructor = new () => { execute: (...args: never[]) => unknown };

/** The chainable wrapper returned by wrapAgent(). */
export interface WrappedAgent<TAgent extends { execute: (...args: never[]) => unknown }> {
  on: (type: HarnessEventType, handler: HarnessEventHandler) => WrappedAgent<TAgent>;
  run: (...args: Parameters<TAgent['execute']>) => Promise<Awaited<ReturnType<TAgent['execute']>>>;
}

/** Wraps an agent class for a one-line run with events. */
export function wrapAgent<C extends ExecutableAgentConstructor>(AgentClass: C): WrappedAgent<InstanceType<C>> {
  const bus = new EventBus();
  const wrapped: WrappedAgent<InstanceType<C>> = {
    on(type, handler) {
      bus.subscribe(type, handler);
      return wrapped;
    },
    run(...args) {
      const agent = new AgentClass() as InstanceType<C>;
      const execute = agent.execute as (...a: unknown[]) => unknown;
      return wrapWithEvents(bus, 'agent', AgentClass.name || 'agent', async () => await execute.apply(agent, args)) as Promise<Awaited<ReturnType<InstanceType<C>['execute']>>>;
    },
  };
  return wrapped;
}
