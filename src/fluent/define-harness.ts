/** defineHarness (seed 002 levels 2–3): agents, state, run | execute, live recording and replay. */
import * as z from 'zod';
import { AgentHarnessError } from '../errors/index.js';
import { CallLedger, recordAgent, replayAgent, type AgentLike } from './agent-proxy.js';
import { EventBus, customEventType, describeError, type HarnessEvent } from './events.js';
import { attachNarration, type MonologueSummarizer } from './narration.js';
import { runParallel, runRetry, wrapWithEvents } from './helpers.js';
import type {
  AgentConstructor,
  ExecuteContext,
  HarnessConfig,
  HarnessFactory,
  HarnessInstance,
  ResolvedAgents,
  StepYield,
} from './harness-types.js';
import { readRecording, writeRecording, type Recording } from './recording.js';

const ConfigSchema = z
  .object({
    name: z.string().min(1).optional(),
    mode: z.enum(['live', 'replay']).optional(),
    agents: z.record(
      z.string(),
      z.custom<AgentConstructor>((v) => typeof v === 'function', 'must be a class'),
    ),
    state: z.custom((v) => typeof v === 'function', 'must be a function').optional(),
    run: z.custom((v) => typeof v === 'function', 'must be a function').optional(),
    execute: z.custom((v) => typeof v === 'function', 'must be a function').optional(),
    recording: z.string().min(1).optional(),
    monologue: z
      .object({ summarize: z.custom((v) => typeof v === 'function', 'must be a function').optional() })
      .optional(),
  })
  .refine((c) => (c.run === undefined) !== (c.execute === undefined), { message: 'give exactly one of run or execute' })
  .refine((c) => c.mode !== 'replay' || c.recording !== undefined, {
    message: 'replay mode needs a recording path',
    path: ['recording'],
  });

/** Defines a harness; an invalid configuration throws CONFIG_INVALID naming the problem. */
export function defineHarness<
  TAgents extends Record<string, AgentConstructor>,
  TState = Record<string, never>,
  TInput = void,
  TResult = void,
>(config: HarnessConfig<TAgents, TState, TInput, TResult>): HarnessFactory<TState, TInput, TResult> {
  const checked = ConfigSchema.safeParse(config);
  if (!checked.success) {
    throw new AgentHarnessError('CONFIG_INVALID', `defineHarness: ${z.prettifyError(checked.error)}`, {
      details: { issues: checked.error.issues },
    });
  }
  const name = config.name ?? 'anonymous-harness';
  return {
    name,
    create: (input, options = {}) => {
      const merged = { ...config, ...options };
      if ((merged.mode ?? 'live') === 'replay' && merged.recording === undefined) {
        throw new AgentHarnessError('CONFIG_INVALID', `${name}: replay mode needs a recording path`);
      }
      return createInstance(name, merged, input);
    },
  };
}

function createInstance<TAgents extends Record<string, AgentConstructor>, TState, TInput, TResult>(
  name: string,
  config: HarnessConfig<TAgents, TState, TInput, TResult>,
  input: TInput,
): HarnessInstance<TState, TResult> {
  const bus = new EventBus();
  const state = (config.state ? config.state(input) : {}) as TState;
  const instance: HarnessInstance<TState, TResult> = {
    state,
    on(type, handler) {
      bus.subscribe(type, handler as (event: HarnessEvent) => void);
      return instance;
    },
    async run() {
      const started = performance.now();
      const mode = config.mode ?? 'live';
      const replaying = mode === 'replay';
      const replay = replaying ? await readRecording(config.recording!) : undefined;
      const ledger = new CallLedger(replay, (entry) =>
        bus.emit('narrative', {
          name: entry.agent,
          agent: entry.agent,
          text: entry.text,
          ...(entry.method ? { method: entry.method } : {}),
        }),
      );
      const narrations = new Set<Promise<void>>();
      const agents = resolveAgents(config.agents, replaying, ledger, bus, {
        narrations,
        ...(config.monologue?.summarize ? { summarize: config.monologue.summarize } : {}),
      });
      const context: ExecuteContext<TAgents, TState> = {
        agents,
        state,
        phase: (n, fn) => wrapWithEvents(bus, 'phase', n, fn),
        task: (id, fn) => wrapWithEvents(bus, 'task', id, fn),
        emit: (type, data) => {
          const emitted = customEventType(type);
          (bus.emit as (t: string, d: Record<string, unknown>) => void).call(bus, emitted, {
            ...data,
            name: typeof data.name === 'string' ? data.name : type,
          });
        },
        retry: (n, fn, options) => runRetry(bus, n, fn, options),
        parallel: (n, fns, options) => runParallel(bus, n, fns, options),
      };
      bus.emit('run:start', { name, mode });
      let result: TResult;
      try {
        result = config.run
          ? await config.run(context, input)
          : await driveGenerator(config.execute!(context), bus, ledger, replaying);
        await settle(narrations);
        if (replaying) ledger.assertConsumed();
      } catch (error) {
        await settle(narrations).catch(() => undefined);
        const described = describeError(error);
        bus.emit('error', { name, message: described.error, ...described });
        bus.emit('run:failed', { name, ...described, duration: performance.now() - started });
        await saveLive(config, name, input, ledger, replaying);
        throw error;
      }
      await saveLive(config, name, input, ledger, replaying);
      const duration = performance.now() - started;
      bus.emit('run:complete', { name, result, duration });
      return { result, state, events: [...bus.events], duration };
    },
  };
  return instance;
}

/** Waits for in-flight async narrations (a sync `@Monologue` method with an async summarizer). */
async function settle(narrations: Set<Promise<void>>): Promise<void> {
  while (narrations.size > 0) {
    const pending = [...narrations];
    narrations.clear();
    await Promise.all(pending);
  }
}

/** Live: instantiate (CONFIG_INVALID when an instance has no `execute`), narrate and record each agent; replay: never construct them. */
function resolveAgents<TAgents extends Record<string, AgentConstructor>>(
  classes: TAgents,
  replaying: boolean,
  ledger: CallLedger,
  bus: EventBus,
  narration: { narrations: Set<Promise<void>>; summarize?: MonologueSummarizer },
): ResolvedAgents<TAgents> {
  const out: Record<string, AgentLike> = {};
  for (const [key, Agent] of Object.entries(classes)) {
    if (replaying) {
      out[key] = replayAgent(key, ledger, bus);
      continue;
    }
    const agent = new Agent() as AgentLike & { execute?: unknown };
    if (typeof agent.execute !== 'function') {
      throw new AgentHarnessError(
        'CONFIG_INVALID',
        `defineHarness: agent "${key}" (class ${Agent.name || 'anonymous'}) has no execute method; every agent class needs one.`,
        { details: { agent: key } },
      );
    }
    attachNarration(agent, {
      agent: key,
      ...(narration.summarize ? { summarize: narration.summarize } : {}),
      narrate(text, method) {
        ledger.record({ kind: 'narrative', agent: key, text, ...(method ? { method } : {}) });
        bus.emit('narrative', { name: key, agent: key, text, ...(method ? { method } : {}) });
      },
      track(pending) {
        narration.narrations.add(pending);
      },
    });
    out[key] = recordAgent(key, agent, ledger, bus);
  }
  return out as ResolvedAgents<TAgents>;
}

/** Runs an execute generator, recording each yielded StepYield as a `step` event (and checking it in replay). */
async function driveGenerator<TResult>(
  gen: AsyncGenerator<StepYield, TResult>,
  bus: EventBus,
  ledger: CallLedger,
  replaying: boolean,
): Promise<TResult> {
  for (let next = await gen.next(); ; next = await gen.next()) {
    if (next.done) return next.value;
    const { step, input, output } = next.value;
    if (replaying) ledger.take({ kind: 'step', step });
    else ledger.record({ kind: 'step', step, input, output });
    bus.emit('step', { name: step, step, input, output });
  }
}

/** Even a failed live run keeps what it recorded, so nothing already done is lost. */
async function saveLive(
  config: { recording?: string },
  name: string,
  input: unknown,
  ledger: CallLedger,
  replaying: boolean,
): Promise<void> {
  if (replaying || config.recording === undefined) return;
  const recording: Recording = { version: 1, harness: name, input, entries: ledger.entries };
  await writeRecording(config.recording, recording);
}
