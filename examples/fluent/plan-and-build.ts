/**
 * Two-phase fluent harness: plan with claude, implement with codex, each call a real audited attempt on the
 * scripted model. `live DIR` writes DIR/recording.json and DIR/events.jsonl; `replay DIR` re-runs the same harness
 * from the recording (no model server, no engine process) and writes DIR/events.replay.jsonl.
 *
 *   npx tsx examples/fluent/plan-and-build.ts live|replay DIR
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { resolveHarnessPaths, startModelServer, turns, type ModelServer } from 'agent-harness';
import {
  attemptAgent,
  defineHarness,
  formatEventLog,
  type AttemptAgentDefaults,
  type HarnessEvent,
} from 'agent-harness/fluent';

const [mode, dirArg] = process.argv.slice(2);
if ((mode !== 'live' && mode !== 'replay') || !dirArg) {
  console.error('usage: npx tsx examples/fluent/plan-and-build.ts live|replay DIR');
  process.exit(2);
}
const dir = resolve(dirArg);
mkdirSync(dir, { recursive: true });

let server: ModelServer | undefined;
let defaults: AttemptAgentDefaults | undefined;
// Only a live run starts the model server; replay never constructs the agents, so this is never called there.
const liveDefaults = (): AttemptAgentDefaults => {
  if (!defaults) throw new Error('live defaults used before the model server started');
  return defaults;
};

/** The harness: definition shared by live and replay; only `mode` differs. */
const planAndBuild = defineHarness({
  name: 'plan-and-build',
  mode,
  recording: join(dir, 'recording.json'),
  agents: { planner: attemptAgent('claude', liveDefaults), builder: attemptAgent('codex', liveDefaults) },
  state: (goal: string) => ({ goal, plan: '' as string | null, handles: [] as string[] }),
  run: async ({ phase, task, agents, state }, goal) => {
    await phase('plan', () =>
      task('write-plan', async () => {
        const out = await agents.planner.execute(`Plan this: ${goal}`, {
          version: 1,
          turns: [turns.final('Plan: create build.txt containing "built".')],
        });
        state.plan = out.finalMessage;
        state.handles.push(out.handle);
        return out;
      }),
    );
    return phase('build', () =>
      task('implement', async () => {
        const out = await agents.builder.execute(`Implement: ${state.plan}`, {
          version: 1,
          turns: [turns.writeFile('build.txt', 'built\n'), turns.final('Created build.txt.')],
        });
        state.handles.push(out.handle);
        if (out.completion !== 'completed')
          throw new Error(`builder attempt ${out.handle} ended ${out.completion}: ${out.error ?? ''}`);
        return out;
      }),
    );
  },
});

const events: HarnessEvent[] = [];
try {
  if (mode === 'live') {
    server = await startModelServer({});
    defaults = {
      paths: resolveHarnessPaths({ env: {}, projectRoot: dir, runRoot: join(dir, 'runs') }),
      modelServer: server,
      timeoutMs: 300_000,
    };
  }
  const out = await planAndBuild
    .create('a file build.txt')
    .on('*', (e) => {
      events.push(e);
      console.log(`${e.timestamp.toISOString()} ${e.type} ${e.name}`);
    })
    .run();
  console.log(
    `result: ${out.result.completion} (${out.result.handle}); runs: ${out.state.handles.join(', ')}; model requests: ${server?.requests.length ?? 0}`,
  );
} finally {
  writeFileSync(join(dir, mode === 'live' ? 'events.jsonl' : 'events.replay.jsonl'), formatEventLog(events));
  await server?.close();
}
