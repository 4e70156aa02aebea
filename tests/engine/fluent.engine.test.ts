/**
 * A two-phase fluent harness on real CLIs (claude plans, codex implements) against the scripted model, recorded
 * live, then replayed from the recording with no agent constructed, no run started and no model request.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  attemptAgent,
  defineHarness,
  providerAgent,
  readRecording,
  type AttemptAgentDefaults,
} from '../../src/public/fluent.js';
import { getProvider } from '../../src/providers/index.js';
import { turns, type ModelServer } from '../../src/model/index.js';
import { startModelServer } from '../../src/engines/model-server.js';
import { resolveHarnessPaths } from '../../src/runtime/paths.js';
import '../../src/vitest/fixtures.js';
import { scaled } from '../helpers/load-scaled.js';

let tmp: string;
let server: ModelServer;
let defaults: AttemptAgentDefaults;
let constructed = 0;

beforeAll(async () => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'ah-fluent-engine-'));
  server = await startModelServer({});
  const hostEnv = { ...process.env, HOME: path.join(tmp, 'host-home') };
  defaults = {
    paths: resolveHarnessPaths({ env: {}, projectRoot: tmp, runRoot: path.join(tmp, 'runs') }),
    modelServer: server,
    hostEnv,
    timeoutMs: scaled(300_000),
  };
});

afterAll(async () => {
  await server.close();
  fs.rmSync(tmp, { recursive: true, force: true });
});

/** Counts constructions, so replay can be shown to build no agent. */
function counted(engine: string) {
  const Base = attemptAgent(engine, () => defaults);
  return class extends Base {
    constructor() {
      super();
      constructed += 1;
    }
  };
}

function harness(mode: 'live' | 'replay') {
  return defineHarness({
    name: 'plan-and-build',
    mode,
    recording: path.join(tmp, 'recording.json'),
    agents: { planner: counted('claude'), builder: counted('codex') },
    state: () => ({ plan: null as string | null }),
    run: async ({ phase, task, agents, state }, goal: string) => {
      await phase('plan', () =>
        task('write-plan', async () => {
          // Plain JSON, as in a script file: the final turn gets the documented `done: true` default.
          const out = await agents.planner.execute(`Plan: ${goal}`, {
            version: 1,
            turns: [{ type: 'final', text: 'Plan: write build.txt.' }],
          });
          state.plan = out.finalMessage;
          return out;
        }),
      );
      return phase('build', () =>
        task('implement', () =>
          agents.builder.execute(`Do: ${state.plan}`, {
            version: 1,
            turns: [turns.writeFile('build.txt', 'built\n'), turns.final('Created build.txt.')],
          }),
        ),
      );
    },
  });
}

describe('fluent harness on real engines', () => {
  it(
    'plans with claude, builds with codex live, then replays from the recording without any engine',
    async () => {
      const live = await harness('live').create('make build.txt').run();
      expect(constructed).toBe(2);
      expect(live.result.completion).toBe('completed');
      expect(live.events.find((e) => e.type === 'agent:complete' && e.name === 'planner.execute')).toMatchObject({
        result: { completion: 'completed' },
      });
      expect(live.state.plan).toContain('Plan: write build.txt.');
      const runs = fs.readdirSync(path.join(tmp, 'runs')).filter((d) => !d.startsWith('.') && d.includes('-'));
      expect(runs.some((d) => d.includes('-claude-'))).toBe(true);
      expect(runs.some((d) => d.includes('-codex-'))).toBe(true);
      const codexRun = runs.find((d) => d.includes('-codex-'))!;
      expect(fs.readFileSync(path.join(tmp, 'runs', codexRun, 'build.txt'), 'utf8')).toBe('built\n');
      expect(live).toHaveEmitted([
        'run:start',
        'phase:start',
        'task:start',
        { type: 'agent:start', name: 'planner.execute' },
        { type: 'agent:complete', name: 'planner.execute' },
        'phase:complete',
        'phase:start',
        { type: 'agent:complete', name: 'builder.execute' },
        'phase:complete',
        'run:complete',
      ]);

      const recording = await readRecording(path.join(tmp, 'recording.json'));
      expect(recording.entries.map((e) => (e.kind === 'call' ? `${e.agent}.${e.method}` : e.kind))).toEqual([
        'planner.execute',
        'builder.execute',
      ]);
      // Each recorded call keeps the handle of the audited run that produced it.
      const handles = recording.entries.map((e) => (e.kind === 'call' ? e.handle : undefined));
      expect(runs.find((d) => d.endsWith(`-claude-${handles[0]}`))).toBeDefined();
      expect(runs.find((d) => d.endsWith(`-codex-${handles[1]}`))).toBeDefined();

      const requestsBefore = server.requests.length;
      const runsBefore = fs.readdirSync(path.join(tmp, 'runs')).sort();
      const replayed = await harness('replay').create('make build.txt').run();
      expect(constructed).toBe(2); // no agent class instantiated, so no runAttempt and no spawn
      expect(server.requests.length).toBe(requestsBefore); // the model request log got nothing
      expect(fs.readdirSync(path.join(tmp, 'runs')).sort()).toEqual(runsBefore); // no run directory created
      expect(replayed.result).toEqual(live.result);
      expect(replayed.events.map((e) => `${e.type} ${e.name}`)).toEqual(live.events.map((e) => `${e.type} ${e.name}`));
    },
    scaled(600_000),
  );

  it(
    'the same two phases with seed-003 providers (claude plans, codex builds), live then replayed with no engine',
    async () => {
      const runRoot = path.join(tmp, 'provider-runs');
      let built = 0;
      const agent = (engine: 'claude' | 'codex') => {
        const Base = providerAgent(getProvider(engine), { provider: engine, extra: { runRoot } });
        return class extends Base {
          constructor() {
            super();
            built += 1;
          }
        };
      };
      const twoPhase = (mode: 'live' | 'replay') =>
        defineHarness({
          name: 'plan-and-build-providers',
          mode,
          recording: path.join(tmp, 'provider-recording.json'),
          agents: { planner: agent('claude'), builder: agent('codex') },
          state: () => ({ planned: false }),
          run: async ({ phase, task, agents, state }) => {
            await phase('plan', () =>
              task('write-plan', async () => {
                const out = await agents.planner.execute({
                  prompt: 'Plan build.txt.',
                  extra: { runRoot, script: { version: 1, turns: [turns.final('Plan: write build.txt.')] } },
                });
                state.planned = out.events.some((e) => (e as { type: string }).type === 'complete');
                return out;
              }),
            );
            return phase('build', () =>
              task('implement', () =>
                agents.builder.execute({
                  prompt: 'Write build.txt.',
                  extra: {
                    runRoot,
                    script: {
                      version: 1,
                      turns: [turns.writeFile('build.txt', 'built\n'), turns.final('Created build.txt.')],
                    },
                  },
                }),
              ),
            );
          },
        });
      const live = await twoPhase('live').create(undefined).run();
      expect(built).toBe(2);
      expect(live.state.planned).toBe(true);
      const last = (
        live.result as {
          events: Array<{ type: string; result?: { success: boolean }; diagnostics?: { runDir: string } }>;
        }
      ).events.at(-1)!;
      expect(last).toMatchObject({ type: 'complete', result: { success: true } });
      expect(fs.readFileSync(path.join(last.diagnostics!.runDir, 'build.txt'), 'utf8')).toBe('built\n');
      const recording = await readRecording(path.join(tmp, 'provider-recording.json'));
      const handles = recording.entries.map((e) => (e.kind === 'call' ? e.handle : undefined));
      expect(handles.every((h) => typeof h === 'string' && /^[0-9a-f]{8}$/.test(h))).toBe(true);

      const runsBefore = fs.readdirSync(runRoot).sort();
      const replayed = await twoPhase('replay').create(undefined).run();
      expect(built).toBe(2); // no provider-backed agent constructed: no query, no engine process
      expect(fs.readdirSync(runRoot).sort()).toEqual(runsBefore); // no run directory, so no model request either
      expect(replayed.events.map((e) => e.type)).toEqual(live.events.map((e) => e.type));
    },
    scaled(600_000),
  );
});
