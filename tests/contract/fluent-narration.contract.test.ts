/**
 * Agents narrate (seed 002's @Monologue): `narrate(this, text)` and the `@Monologue()` decorator emit `narrative`
 * events, in plain words or summarized by an injected summarizer (an LLM caller through `summarizeWith`);
 * narratives are recorded and replayed in place. Sync agent methods stay sync, decorated or not.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  defineHarness,
  narrate,
  narrateMethods,
  readRecording,
  summarizeWith,
  wrapAgent,
  type HarnessEvent,
  type NarrationCaller,
} from 'agent-harness/fluent';
import { bindModel, createScriptedCaller } from 'agent-harness/orchestrator';
import { scaled } from '../helpers/load-scaled.js';

const dir = await mkdtemp(join(tmpdir(), 'fluent-narration-'));
afterAll(() => rm(dir, { recursive: true, force: true }));

// Vite's transform does not compile decorator syntax, so this file uses the helper form; the `@Monologue()`
// form runs in examples/fluent/narrating-agent.ts (through tsx), checked by the last test.
class Planner {
  async execute(goal: string): Promise<string> {
    narrate(this, `thinking about ${goal}`);
    return `plan for ${goal}`;
  }

  double(n: number): number {
    return n * 2;
  }

  fail(): never {
    throw new Error('cannot');
  }
}
narrateMethods(Planner, ['execute', 'fail']);
narrateMethods(Planner, ['double'], {
  summarize: (call) => `doubled ${String(call.args[0])} into ${String(call.result)}`,
});

const kinds = (events: HarnessEvent[]) =>
  events
    .filter((e) => e.type !== 'run:start' && e.type !== 'run:complete')
    .map((e) => (e.type === 'narrative' ? `narrative: ${e.text}` : `${e.type} ${e.name}`));

describe('narration', () => {
  it("narrate() and @Monologue emit narrative events between the call's start and complete; sync methods stay sync", async () => {
    let doubled: unknown;
    const out = await defineHarness({
      agents: { planner: Planner },
      run: async ({ agents }) => {
        doubled = agents.planner.double(21);
        return agents.planner.execute('a README');
      },
    })
      .create()
      .run();
    expect(doubled).toBe(42);
    expect(out.result).toBe('plan for a README');
    expect(kinds(out.events)).toEqual([
      'agent:start planner.double',
      'narrative: doubled 21 into 42',
      'agent:complete planner.double',
      'agent:start planner.execute',
      'narrative: thinking about a README',
      'narrative: execute("a README") returned "plan for a README"',
      'agent:complete planner.execute',
    ]);
    expect(out.events.find((e) => e.type === 'narrative')).toMatchObject({
      name: 'planner',
      agent: 'planner',
      method: 'double',
    });
  });

  it('a throwing method is narrated and still throws synchronously', async () => {
    const events: HarnessEvent[] = [];
    let thrown: unknown;
    await defineHarness({
      agents: { planner: Planner },
      run: async ({ agents }) => {
        try {
          agents.planner.fail();
        } catch (error) {
          thrown = error;
        }
      },
    })
      .create()
      .on('*', (e) => events.push(e))
      .run();
    expect(String(thrown)).toContain('cannot');
    expect(kinds(events)).toEqual([
      'agent:start planner.fail',
      'narrative: fail() failed: cannot',
      'agent:failed planner.fail',
    ]);
  });

  it('the harness-wide summarizer can be an LLM caller (summarizeWith), and narratives replay from the recording', async () => {
    const caller = createScriptedCaller({ answers: ['  I planned the tests.  '] });
    const llm: NarrationCaller = bindModel(caller, 'narrator-small');
    const recording = join(dir, 'narration.json');
    const make = (mode: 'live' | 'replay') =>
      defineHarness({
        mode,
        recording,
        agents: { planner: Planner },
        monologue: { summarize: summarizeWith(llm) },
        run: async ({ agents }) => agents.planner.execute('tests'),
      });
    const live = await make('live').create().run();
    expect(caller.calls).toHaveLength(1);
    expect(caller.calls[0]!.model).toBe('narrator-small');
    expect(caller.calls[0]!.messages[1]!.content).toBe('Agent planner: execute("tests") returned "plan for tests"');
    expect(kinds(live.events)).toEqual([
      'agent:start planner.execute',
      'narrative: thinking about tests',
      'narrative: I planned the tests.',
      'agent:complete planner.execute',
    ]);
    expect((await readRecording(recording)).entries.map((e) => e.kind)).toEqual(['narrative', 'narrative', 'call']);
    const replayed = await make('replay').create().run();
    expect(caller.calls).toHaveLength(1); // replay never calls the summarizer
    expect(kinds(replayed.events)).toEqual(kinds(live.events));
  });

  it("wrapAgent emits the agent's narration; outside a harness narration is a no-op", async () => {
    const events: HarnessEvent[] = [];
    await wrapAgent(Planner)
      .on('narrative', (e) => events.push(e))
      .run('docs');
    expect(events.map((e) => (e.type === 'narrative' ? e.text : e.type))).toEqual([
      'thinking about docs',
      'execute("docs") returned "plan for docs"',
    ]);
    expect(await new Planner().execute('alone')).toBe('plan for alone');
    expect(new Planner().double(2)).toBe(4);
  });

  it('narrateMethods names a missing method with CONFIG_INVALID', () => {
    class Empty {
      execute(): void {}
    }
    expect(() => narrateMethods(Empty, ['nope' as 'execute'])).toThrow(
      expect.objectContaining({ code: 'CONFIG_INVALID', message: expect.stringContaining('"nope"') }),
    );
  });

  it('the @Monologue() decorator form narrates the same way (examples/fluent/narrating-agent.ts through tsx)', async () => {
    const { execa } = await import('execa');
    const result = await execa('npx', ['tsx', 'examples/fluent/narrating-agent.ts'], {
      reject: false,
      timeout: scaled(120_000),
    });
    expect(result.exitCode, result.stderr).toBe(0);
    expect(result.stdout.split('\n')).toEqual([
      'agent:start reviewer.execute',
      'narrative reviewer: reading 2 lines',
      'narrative reviewer: execute("const a = 1;\\nconst b = 2;") returned {"ok":true,"lines":2}',
      'agent:complete reviewer.execute',
      'agent:start reviewer.count',
      'narrative reviewer: counted 3 words',
      'agent:complete reviewer.count',
      'count: 3 (number)',
    ]);
  });
});
