import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { defineHarness, readRecording, resolveRecordingPath, type HarnessConfig } from '../../src/public/fluent.js';
import { isAgentHarnessError } from '../../src/errors/index.js';

const dir = await mkdtemp(join(tmpdir(), 'fluent-replay-'));
afterAll(() => rm(dir, { recursive: true, force: true }));

let constructed = 0;
class Planner {
  constructor() {
    constructed += 1;
  }
  async execute(goal: string) {
    return this.plan(goal);
  }
  async plan(goal: string) {
    return { steps: [`do ${goal}`], handle: 'run-abc' };
  }
}
class Builder {
  constructor() {
    constructed += 1;
  }
  async execute(step: string) {
    return this.build(step);
  }
  async build(step: string) {
    return `built ${step}`;
  }
}

function config(
  recording: string,
  mode: 'live' | 'replay',
  order: 'normal' | 'swapped' = 'normal',
): HarnessConfig<{ planner: typeof Planner; builder: typeof Builder }, { log: string[] }, string, string> {
  return {
    name: 'plan-and-build',
    mode,
    recording,
    agents: { planner: Planner, builder: Builder },
    state: () => ({ log: [] }),
    run: async ({ phase, task, agents, state }, goal) => {
      if (order === 'swapped') await agents.builder.build('early');
      const plan = await phase('plan', () => task('plan', () => agents.planner.plan(goal)));
      return phase('build', async () => {
        const out = await task('build', () => agents.builder.build(plan.steps[0]!));
        state.log.push(out);
        return out;
      });
    },
  };
}

describe('fluent live recording and replay', () => {
  it('live writes a versioned recording of every call with args, output and handle; replay reproduces it without agents', async () => {
    const path = join(dir, 'a.json');
    const live = await defineHarness(config(path, 'live')).create('x').run();
    expect(constructed).toBe(2);
    const recording = await readRecording(path);
    expect(recording).toMatchObject({ version: 1, harness: 'plan-and-build', input: 'x' });
    expect(recording.entries).toEqual([
      {
        kind: 'call',
        agent: 'planner',
        method: 'plan',
        args: ['x'],
        output: { steps: ['do x'], handle: 'run-abc' },
        handle: 'run-abc',
      },
      { kind: 'call', agent: 'builder', method: 'build', args: ['do x'], output: 'built do x' },
    ]);
    const replayed = await defineHarness(config(path, 'replay')).create('x').run();
    expect(constructed).toBe(2); // no agent constructed in replay
    expect(replayed.result).toBe(live.result);
    expect(replayed.state.log).toEqual(['built do x']);
    expect(replayed.events.map((e) => `${e.type}:${e.name}`)).toEqual(live.events.map((e) => `${e.type}:${e.name}`));
    expect(replayed.events.find((e) => e.type === 'agent:complete')).toMatchObject({
      name: 'planner.plan',
      handle: 'run-abc',
      replayed: true,
    });
  });

  it('replay names the call on an out-of-order call', async () => {
    const path = join(dir, 'b.json');
    await defineHarness(config(path, 'live')).create('x').run();
    const error = await defineHarness(config(path, 'replay', 'swapped'))
      .create('x')
      .run()
      .catch((e: unknown) => e);
    expect(isAgentHarnessError(error, 'FLUENT_REPLAY_MISMATCH')).toBe(true);
    expect(String((error as Error).message)).toMatch(/builder\.build at entry 1 .* planner\.plan/);
  });

  it('replay names the call the recording lacks, and unused recorded calls', async () => {
    const path = join(dir, 'c.json');
    await writeFile(
      path,
      JSON.stringify({
        version: 1,
        harness: 'plan-and-build',
        entries: [{ kind: 'call', agent: 'planner', method: 'plan', args: ['x'], output: { steps: ['s'] } }],
      }),
    );
    const missing = await defineHarness(config(path, 'replay'))
      .create('x')
      .run()
      .catch((e: unknown) => e);
    expect(isAgentHarnessError(missing, 'FLUENT_REPLAY_MISMATCH')).toBe(true);
    expect((missing as Error).message).toMatch(/builder\.build \(entry 2\) but the recording has only 1/);

    await writeFile(
      path,
      JSON.stringify({
        version: 1,
        harness: 'h',
        entries: [
          { kind: 'call', agent: 'planner', method: 'plan', args: [], output: 1 },
          { kind: 'call', agent: 'planner', method: 'plan', args: [], output: 2 },
        ],
      }),
    );
    const unused = await defineHarness({
      mode: 'replay',
      recording: path,
      agents: { planner: Planner },
      run: async ({ agents }) => agents.planner.plan('x'),
    })
      .create()
      .run()
      .catch((e: unknown) => e);
    expect((unused as Error).message).toMatch(/planner\.plan \(entry 2\).*never asked for/);
  });

  it('a missing or malformed recording is FLUENT_RECORDING_INVALID', async () => {
    for (const content of [undefined, 'not json', JSON.stringify({ version: 2, harness: 'h', entries: [] })]) {
      const path = join(dir, `bad-${Math.random()}.json`);
      if (content !== undefined) await writeFile(path, content);
      const error = await defineHarness(config(path, 'replay'))
        .create('x')
        .run()
        .catch((e: unknown) => e);
      expect(isAgentHarnessError(error, 'FLUENT_RECORDING_INVALID'), String(error)).toBe(true);
    }
  });

  it('a failing live run still writes what it recorded, including the failed call', async () => {
    const path = join(dir, 'd.json');
    class Flaky {
      async execute(): Promise<never> {
        return this.go();
      }
      async go(): Promise<never> {
        throw new Error('down');
      }
    }
    await expect(
      defineHarness({ recording: path, agents: { flaky: Flaky }, run: async ({ agents }) => agents.flaky.go() })
        .create()
        .run(),
    ).rejects.toThrow('down');
    expect(JSON.parse(await readFile(path, 'utf8')).entries).toEqual([
      { kind: 'call', agent: 'flaky', method: 'go', args: [], error: 'down' },
    ]);
    // and replay re-throws the recorded failure
    await expect(
      defineHarness({
        mode: 'replay',
        recording: path,
        agents: { flaky: Flaky },
        run: async ({ agents }) => agents.flaky.go(),
      })
        .create()
        .run(),
    ).rejects.toThrow('down');
  });

  it('replay checks execute() steps against the recording', async () => {
    const path = join(dir, 'e.json');
    const make = (mode: 'live' | 'replay', step: string) =>
      defineHarness({
        mode,
        recording: path,
        agents: {},
        async *execute() {
          yield { step, output: 1 };
          return step;
        },
      });
    await make('live', 'one').create().run();
    expect((await readRecording(path)).entries).toEqual([{ kind: 'step', step: 'one', output: 1 }]);
    expect((await make('replay', 'one').create().run()).result).toBe('one');
    await expect(make('replay', 'two').create().run()).rejects.toThrow(/step "two" at entry 1 .* step "one"/);
  });

  it('a synchronous agent method returns its value live and in replay (recorded as sync)', async () => {
    const path = join(dir, 'sync.json');
    class Calc {
      execute(n: number): number {
        return n * 2;
      }
    }
    const seen: unknown[] = [];
    const make = (mode: 'live' | 'replay') =>
      defineHarness({
        mode,
        recording: path,
        agents: { calc: Calc },
        run: async ({ agents }) => {
          const value = agents.calc.execute(21);
          seen.push(value);
          return value;
        },
      });
    expect((await make('live').create().run()).result).toBe(42);
    expect((await readRecording(path)).entries).toEqual([
      { kind: 'call', agent: 'calc', method: 'execute', args: [21], output: 42, sync: true },
    ]);
    expect((await make('replay').create().run()).result).toBe(42);
    expect(seen).toEqual([42, 42]); // never a Promise
  });

  it('resolves recording paths after the snapshot convention', () => {
    expect(resolveRecordingPath('/p/tests/a.test.ts', 'plan and build')).toBe(
      '/p/tests/__recordings__/a.test.ts/plan-and-build.json',
    );
  });
});
