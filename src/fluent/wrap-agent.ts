/** wrapAgent (seed 002 level 1): one agent, its `execute` call wrapped in agent:start/complete/failed events. */
import { AgentHarnessError } from '../errors/index.js';
import {
  EventBus,
  describeError,
  type HarnessEvent,
  type HarnessEventHandler,
  type HarnessEventType,
} from './events.js';
import type { AgentConstructor } from './harness-types.js';
import { attachNarration } from './narration.js';

/** An agent class whose instances have an `execute` method (the same as {@link AgentConstructor}). */
export type ExecutableAgentConstructor = AgentConstructor;

/** The chainable wrapper returned by wrapAgent(). */
export interface WrappedAgent<TAgent extends { execute: (...args: never[]) => unknown }> {
  /** Subscribes to the events `type` selects; chainable. */
  on: <E extends HarnessEventType>(type: E, handler: HarnessEventHandler<E>) => WrappedAgent<TAgent>;
  /** Constructs the agent and runs `execute(...args)`. */
  run: (...args: Parameters<TAgent['execute']>) => Promise<Awaited<ReturnType<TAgent['execute']>>>;
}

/** Wraps an agent class for a one-line run with events (`name` is `Class.execute`); narration goes to the same events. */
export function wrapAgent<C extends AgentConstructor>(AgentClass: C): WrappedAgent<InstanceType<C>> {
  const bus = new EventBus();
  const agentName = AgentClass.name || 'agent';
  const wrapped: WrappedAgent<InstanceType<C>> = {
    on(type, handler) {
      bus.subscribe(type, handler as (event: HarnessEvent) => void);
      return wrapped;
    },
    run: async (...args): Promise<Awaited<ReturnType<InstanceType<C>['execute']>>> => {
      const agent = new AgentClass() as InstanceType<C>;
      const execute = agent.execute as unknown;
      if (typeof execute !== 'function')
        throw new AgentHarnessError('CONFIG_INVALID', `wrapAgent: class ${agentName} has no execute method.`, {
          details: { agent: agentName },
        });
      const pending: Promise<void>[] = [];
      attachNarration(agent, {
        agent: agentName,
        narrate: (text, method) =>
          bus.emit('narrative', { name: agentName, agent: agentName, text, ...(method ? { method } : {}) }),
        track: (p) => pending.push(p),
      });
      const base = { name: `${agentName}.execute`, agent: agentName, method: 'execute' };
      bus.emit('agent:start', base);
      try {
        const result = (await (execute as (...a: unknown[]) => unknown).apply(agent, args)) as Awaited<
          ReturnType<InstanceType<C>['execute']>
        >;
        await Promise.all(pending);
        bus.emit('agent:complete', { ...base, result });
        return result;
      } catch (error) {
        await Promise.allSettled(pending);
        bus.emit('agent:failed', { ...base, ...describeError(error) });
        throw error;
      }
    },
  };
  return wrapped;
}
