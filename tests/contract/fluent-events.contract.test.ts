import { describe, expect, it, vi, afterEach } from 'vitest';
import { defineHarness, wrapAgent, computeBackoff, type HarnessEvent } from '../../src/public/fluent.js';
import { isAgentHarnessError } from '../../src/errors/index.js';

const types = (events: HarnessEvent[]) => events.map((e) => `${e.type}:${e.name}`);
/** The events of a run without its run:start / run:complete frame. */
const inner = (events: HarnessEvent[]) => events.filter((e) => !e.type.startsWith('run:'));
/** One event's field, whatever its type (for table-style assertions). */
const field = (e: HarnessEvent, key: string): unknown => (e as unknown as Record<string, unknown>)[key];

class Echo {
  execute(text: string): Promise<string> {
    return Promise.resolve(`echo ${text}`);
  }
}

describe('fluent event contract', () => {
  afterEach(() => vi.useRealTimers());

  it('wraps phases and tasks: start before, complete with result after, inner before outer, name+timestamp on all', async () => {
    const seen: string[] = [];
    const h = defineHarness({
      name: 'nest',
      agents: { echo: Echo },
      state: () => ({ count: 0 }),
      run: async ({ phase, task, agents, state }) =>
        phase('planning', async () => {
          const a = await task('a', async () => {
            state.count += 1;
            return agents.echo.execute('a');
          });
          const b = await task('b', async () => 'b');
          return `${a}+${b}`;
        }),
    });
    const out = await h
      .create()
      .on('*', (e) => seen.push(e.type))
      .run();
    expect(out.result).toBe('echo a+b');
    expect(out.state.count).toBe(1);
    expect(types(out.events)).toEqual([
      'run:start:nest',
      'phase:start:planning',
      'task:start:a',
      'agent:start:echo.execute',
      'agent:complete:echo.execute',
      'task:complete:a',
      'task:start:b',
      'task:complete:b',
      'phase:complete:planning',
      'run:complete:nest',
    ]);
    expect(seen).toEqual(out.events.map((e) => e.type));
    for (const e of out.events) expect(e.timestamp).toBeInstanceOf(Date);
    const taskA = out.events.find((e) => e.type === 'task:complete' && e.name === 'a');
    expect(taskA).toMatchObject({ id: 'a', status: 'complete', result: 'echo a' });
    expect(out.events.at(-2)).toMatchObject({ type: 'phase:complete', status: 'complete', result: 'echo a+b' });
    expect(out.events.at(-1)).toMatchObject({ type: 'run:complete', result: 'echo a+b' });
    expect(out.duration).toBeGreaterThanOrEqual(0);
  });

  it('propagates a task failure to its phase and to the caller with message, stack and cause', async () => {
    const boom = new Error('Compilation failed');
    const h = defineHarness({
      name: 'fail',
      agents: {},
      run: async ({ phase, task }) =>
        phase('coding', () =>
          task('write-code', async () => {
            throw boom;
          }),
        ),
    });
    const events: HarnessEvent[] = [];
    await expect(
      h
        .create()
        .on('*', (e) => events.push(e))
        .run(),
    ).rejects.toBe(boom);
    expect(types(events)).toEqual([
      'run:start:fail',
      'phase:start:coding',
      'task:start:write-code',
      'task:failed:write-code',
      'phase:failed:coding',
      'error:fail',
      'run:failed:fail',
    ]);
    const failed = events[3]!;
    if (failed.type !== 'task:failed') throw new Error(`expected task:failed, got ${failed.type}`);
    expect(failed.error).toBe('Compilation failed');
    expect(failed.stack).toContain('Compilation failed');
    expect(failed.cause).toBe(boom);
    expect(failed).toMatchObject({ id: 'write-code', status: 'failed' });
    expect(events[4]).toMatchObject({ type: 'phase:failed', error: 'Compilation failed' });
    expect(events[6]).toMatchObject({ type: 'run:failed', error: 'Compilation failed' });
  });

  it('filters by family and exact type', async () => {
    const phases: string[] = [];
    const exact: string[] = [];
    await defineHarness({ agents: {}, run: async ({ phase, task }) => phase('p', () => task('t', async () => 1)) })
      .create()
      .on('phase', (e) => phases.push(e.type))
      .on('task:complete', (e) => exact.push(e.name))
      .run();
    expect(phases).toEqual(['phase:start', 'phase:complete']);
    expect(exact).toEqual(['t']);
  });

  it('emit() passes built-in types through and prefixes others with custom:, with name and timestamp', async () => {
    const custom: string[] = [];
    const out = await defineHarness({
      agents: {},
      run: async ({ emit }) => {
        emit('narrative', { agent: 'x', text: 'hi' });
        emit('deploy', { env: 'prod' });
        emit('custom:ping', { name: 'p' });
      },
    })
      .create()
      .on('custom', (e) => custom.push(e.type))
      .run();
    const events = inner(out.events);
    expect(events[0]).toMatchObject({ type: 'narrative', name: 'narrative', agent: 'x', text: 'hi' });
    expect(events[1]).toMatchObject({ type: 'custom:deploy', name: 'deploy', env: 'prod' });
    expect(events[2]).toMatchObject({ type: 'custom:ping', name: 'p' });
    expect(custom).toEqual(['custom:deploy', 'custom:ping']);
    expect(events[0]!.timestamp).toBeInstanceOf(Date);
  });

  it('.on() with an unknown filter is CONFIG_INVALID (for JavaScript callers)', () => {
    const instance = defineHarness({ agents: {}, run: async () => 1 }).create();
    let caught: unknown;
    try {
      (instance.on as (t: string, h: () => void) => unknown)('bogus', () => undefined);
    } catch (error) {
      caught = error;
    }
    expect(isAgentHarnessError(caught, 'CONFIG_INVALID'), String(caught)).toBe(true);
    expect(String(caught)).toContain('"bogus"');
  });

  it('records each execute() StepYield as a step event, in order', async () => {
    const out = await defineHarness({
      name: 'gen',
      agents: { echo: Echo },
      async *execute({ agents }) {
        const plan = await agents.echo.execute('plan');
        yield { step: 'plan', input: 'plan', output: plan };
        yield { step: 'build', output: 2 };
        return 'done';
      },
    })
      .create()
      .run();
    expect(out.result).toBe('done');
    expect(inner(out.events).map((e) => e.type)).toEqual(['agent:start', 'agent:complete', 'step', 'step']);
    expect(inner(out.events)[2]).toMatchObject({ step: 'plan', name: 'plan', input: 'plan', output: 'echo plan' });
  });

  it('rejects run+execute, neither, replay without recording, and non-class agents with CONFIG_INVALID', () => {
    const bad = [
      {
        agents: {},
        run: async () => 1,
        // biome-ignore lint/correctness/useYield: a generator is what this case refuses
        async *execute() {
          return 1;
        },
      },
      { agents: {} },
      { agents: {}, mode: 'replay', run: async () => 1 },
      { agents: { x: 3 }, run: async () => 1 },
    ];
    for (const config of bad) {
      let caught: unknown;
      try {
        defineHarness(config as never);
      } catch (error) {
        caught = error;
      }
      expect(isAgentHarnessError(caught, 'CONFIG_INVALID'), String(caught)).toBe(true);
    }
    expect(() =>
      defineHarness({
        agents: {},
        run: async () => 1,
        // biome-ignore lint/correctness/useYield: a generator is what this case refuses
        async *execute() {
          return 1;
        },
      } as never),
    ).toThrow(/exactly one of run or execute/);
  });

  it('wrapAgent runs execute with agent:start/complete events and re-throws failures', async () => {
    const events: HarnessEvent[] = [];
    expect(
      await wrapAgent(Echo)
        .on('*', (e) => events.push(e))
        .run('x'),
    ).toBe('echo x');
    expect(types(events)).toEqual(['agent:start:Echo.execute', 'agent:complete:Echo.execute']);
    expect(events[1]).toMatchObject({ agent: 'Echo', method: 'execute', result: 'echo x' });
    class Bad {
      execute(): Promise<never> {
        return Promise.reject(new Error('nope'));
      }
    }
    await expect(
      wrapAgent(Bad)
        .on('agent:failed', (e) => events.push(e))
        .run(),
    ).rejects.toThrow('nope');
    expect(events.at(-1)).toMatchObject({ type: 'agent:failed', name: 'Bad.execute', error: 'nope' });
  });

  it('a throwing listener does not change the outcome; it is reported as an error event', async () => {
    const out = await defineHarness({ agents: {}, run: async ({ task }) => task('t', async () => 1) })
      .create()
      .on('task:start', () => {
        throw new Error('listener');
      })
      .run();
    expect(out.result).toBe(1);
    expect(inner(out.events).map((e) => e.type)).toEqual(['task:start', 'error', 'task:complete']);
    expect(inner(out.events)[1]).toMatchObject({ type: 'error', name: 'handler', error: 'listener' });
  });
});

describe('retry', () => {
  afterEach(() => vi.useRealTimers());

  it('computes capped exponential backoff', () => {
    expect([1, 2, 3, 4, 5].map((a) => computeBackoff(a, 1000, 5000))).toEqual([1000, 2000, 4000, 5000, 5000]);
  });

  it('emits start/attempt/backoff/attempt/success and waits the backoff (fake timers)', async () => {
    vi.useFakeTimers();
    let calls = 0;
    const run = defineHarness({
      agents: {},
      run: async ({ retry }) =>
        retry(
          'api-call',
          async () => {
            calls += 1;
            if (calls < 3) throw new Error('Network error');
            return 'ok';
          },
          { retries: 4, minTimeout: 1000, maxTimeout: 1500 },
        ),
    })
      .create()
      .run();
    await vi.advanceTimersByTimeAsync(999);
    expect(calls).toBe(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(calls).toBe(2);
    await vi.advanceTimersByTimeAsync(1499);
    expect(calls).toBe(2);
    await vi.advanceTimersByTimeAsync(1);
    const out = await run;
    expect(out.result).toBe('ok');
    expect(
      inner(out.events).map((e) => [e.type, field(e, 'attempt') ?? field(e, 'maxAttempts'), field(e, 'delay')]),
    ).toEqual([
      ['retry:start', 4, undefined],
      ['retry:attempt', 1, undefined],
      ['retry:backoff', 1, 1000],
      ['retry:attempt', 2, undefined],
      ['retry:backoff', 2, 1500],
      ['retry:attempt', 3, undefined],
      ['retry:success', 3, undefined],
    ]);
    expect(inner(out.events)[2]).toMatchObject({
      type: 'retry:backoff',
      name: 'api-call',
      attempt: 1,
      delay: 1000,
      error: 'Network error',
    });
  });

  it('emits retry:failure after the last attempt and re-throws through the task', async () => {
    vi.useFakeTimers();
    const events: HarnessEvent[] = [];
    const run = defineHarness({
      agents: {},
      run: async ({ task, retry }) =>
        task('t', () =>
          retry(
            'r',
            async () => {
              throw new Error('always');
            },
            { retries: 2, minTimeout: 10 },
          ),
        ),
    })
      .create()
      .on('*', (e) => events.push(e))
      .run();
    const settled = expect(run).rejects.toThrow('always');
    await vi.advanceTimersByTimeAsync(10);
    await settled;
    expect(inner(events).map((e) => e.type)).toEqual([
      'task:start',
      'retry:start',
      'retry:attempt',
      'retry:backoff',
      'retry:attempt',
      'retry:failure',
      'task:failed',
      'error',
    ]);
    expect(inner(events)[5]).toMatchObject({ attempts: 2, error: 'always' });
  });
});

describe('agent calls inside retry', () => {
  afterEach(() => vi.useRealTimers());

  it('each failing attempt emits agent:start and agent:failed, the last one agent:complete', async () => {
    vi.useFakeTimers();
    let calls = 0;
    class Flaky {
      async execute(): Promise<string> {
        calls += 1;
        if (calls < 2) throw new Error(`down ${calls}`);
        return 'up';
      }
    }
    const run = defineHarness({
      agents: { flaky: Flaky },
      run: async ({ retry, agents }) => retry('call', () => agents.flaky.execute(), { retries: 3, minTimeout: 10 }),
    })
      .create()
      .run();
    await vi.advanceTimersByTimeAsync(10);
    const out = await run;
    expect(out.result).toBe('up');
    expect(types(inner(out.events))).toEqual([
      'retry:start:call',
      'retry:attempt:call',
      'agent:start:flaky.execute',
      'agent:failed:flaky.execute',
      'retry:backoff:call',
      'retry:attempt:call',
      'agent:start:flaky.execute',
      'agent:complete:flaky.execute',
      'retry:success:call',
    ]);
    expect(inner(out.events)[3]).toMatchObject({
      type: 'agent:failed',
      agent: 'flaky',
      method: 'execute',
      error: 'down 1',
    });
  });
});

describe('parallel', () => {
  it('never runs more than `concurrency` at once and keeps results in order', async () => {
    let running = 0;
    let peak = 0;
    const gates: Array<() => void> = [];
    let onStarted: (() => void) | undefined;
    const item = (i: number) => async () => {
      running += 1;
      peak = Math.max(peak, running);
      const gate = new Promise<void>((resolve) => gates.push(resolve));
      onStarted?.();
      await gate;
      running -= 1;
      return i * 10;
    };
    // Resolves once an item is waiting at its gate (event-driven, no polling).
    const waitForGate = () =>
      gates.length > 0
        ? Promise.resolve()
        : new Promise<void>((resolve) => {
            onStarted = resolve;
          });
    const run = defineHarness({
      agents: {},
      run: async ({ parallel }) => parallel('files', [0, 1, 2, 3, 4].map(item), { concurrency: 2 }),
    })
      .create()
      .run();
    // Release items one at a time; the limit must hold at every point.
    for (let released = 0; released < 5; released += 1) {
      await waitForGate();
      onStarted = undefined;
      expect(running).toBeLessThanOrEqual(2);
      gates.shift()!();
    }
    const out = await run;
    expect(peak).toBe(2);
    expect(out.result).toEqual([0, 10, 20, 30, 40]);
    const events = inner(out.events);
    expect(events[0]).toMatchObject({ type: 'parallel:start', total: 5, concurrency: 2 });
    expect(events.flatMap((e) => (e.type === 'parallel:item:complete' ? [e.completed] : []))).toEqual([1, 2, 3, 4, 5]);
    expect(events.at(-1)).toMatchObject({ type: 'parallel:complete', total: 5 });
  });

  it('re-throws the first failure after emitting parallel:failed and starts no more items', async () => {
    let started = 0;
    const fns = [0, 1, 2, 3].map((i) => async () => {
      started += 1;
      if (i === 0) throw new Error('item 0');
      return i;
    });
    const events: HarnessEvent[] = [];
    await expect(
      defineHarness({ agents: {}, run: async ({ parallel }) => parallel('p', fns, { concurrency: 1 }) })
        .create()
        .on('parallel', (e) => events.push(e))
        .run(),
    ).rejects.toThrow('item 0');
    expect(started).toBe(1);
    expect(events.map((e) => e.type)).toEqual(['parallel:start', 'parallel:item:failed', 'parallel:failed']);
  });
});
