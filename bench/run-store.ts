/**
 * Run store benchmark (issue 13): an attempt's bookkeeping in the run store as the run root fills up, with 0, 300,
 * 1000 and 5000 runs already there. "warm" is a process that has read the index before (a Vitest worker's later
 * attempts): `createRun`, then `updateRun` after the attempt's meta says finished, median of {@link ROUNDS}. "first
 * read" is the first `createRun` of a process (the CLI's case), which reads and validates the whole index once: it
 * is measured in this process by replacing the index log with a copy (another inode), which this process has not
 * read. That copy leaves this process's code warm, so the same first `createRun` is also measured in a fresh Node
 * process, as the CLI's `start` runs it, and so is `agent-harness runs --json` (a whole process, which rescans every
 * run directory and checks each attempt's meta for an orphan). The runs already there are written directly (their
 * run.json and a finished meta.1.json) and indexed by one rescan, so that preparing 5000 takes seconds. Figures are
 * printed, never asserted.
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import type { RunIndexEntry } from '../src/protocol/index.js';
import { createRun, refreshRunIndex, reserveAttempt, updateRun, type CreateRunOptions } from '../src/runtime/run-store.js';
import { median, type BenchRow } from './figures.js';
import { bin, distIsCurrent, harnessEnv, root, runProcess, Scratch } from './util.js';

const ROUNDS = 30;
const FIRST_READ_ROUNDS = 5;
/** Whole processes per figure (`runs --json`, a first `createRun` in a fresh process). */
const PROCESS_ROUNDS = 3;
const OPTIONS: CreateRunOptions = { engine: 'codex', translateMode: 0, modelMode: 'scripted', script: null, startArgs: ['exec', '--json', 'hi'], prompt: null, label: 'bench' };

/** Writes `count` run directories with their run.json straight to disk, then indexes them with one rescan. */
async function fillRunRoot(runRoot: string, count: number): Promise<void> {
  const stamp = new Date('2026-01-01T00:00:00.000Z').toISOString();
  for (let i = 0; i < count; i += 1) {
    const handle = randomBytes(4).toString('hex');
    const runId = `20260101T000000-codex-${handle}`;
    const runDir = path.join(runRoot, runId);
    const entry: RunIndexEntry = {
      run_id: runId, handle, engine: 'codex', run_dir: runDir, created_at: stamp, updated_at: stamp, attempts: 1, session_id: 'thread', translate_mode: 0,
      model_mode: 'scripted', script: null, last_completion: 'completed', start_args: [...OPTIONS.startArgs!], prompt: null, label: `bench ${i}`,
    };
    fs.mkdirSync(path.join(runDir, '.audit'), { recursive: true });
    fs.writeFileSync(path.join(runDir, '.audit', 'run.json'), `${JSON.stringify(entry, null, 2)}\n`);
    fs.writeFileSync(path.join(runDir, '.audit', 'meta.1.json'), finishedMeta(runId, handle));
  }
  await refreshRunIndex(runRoot);
}

/** A finished attempt's meta of about a real one's size (~4.5 KB: its command, environment and timings). */
function finishedMeta(runId: string, handle: string): string {
  const env = Object.fromEntries(Array.from({ length: 30 }, (_, i) => [`VARIABLE_${i}`, `/tmp/agent-harness/agent_cache/value-${i}`]));
  const meta = {
    version: 'agent-harness.meta/1', run_id: runId, handle, attempt: 1, engine: 'codex', launch: 'start', status: 'finished', translate_mode: 0,
    model: { mode: 'scripted', base_url: 'http://127.0.0.1:40000', script: null },
    command: { executable: '/node_modules/@openai/codex-linux-x64/vendor/x86_64-unknown-linux-musl/bin/codex', argv: ['exec', '--json', 'hi'] },
    env, timings: { started_at: '2026-01-01T00:00:00.000Z', ended_at: '2026-01-01T00:00:00.400Z', duration_ms: 400 },
    completion: { state: 'completed', reason: 'done_marker' }, exit: { code: 0, signal: null, timed_out: false, canceled: false }, error: null,
  };
  return `${JSON.stringify(meta, null, 2)}\n`;
}

/** Median wall milliseconds of `agent-harness runs --json` over the data dir holding `runRoot` (its `harness_runs`). */
async function runsCliMs(runRoot: string, home: string): Promise<number> {
  const env = harnessEnv(path.dirname(runRoot), home);
  const times: number[] = [];
  for (let round = 0; round < PROCESS_ROUNDS; round += 1) {
    const started = performance.now();
    await runProcess(process.execPath, [bin, 'runs', '--json'], { env, cwd: home });
    times.push(performance.now() - started);
  }
  return median(times);
}

/** Median milliseconds of the first `createRun` in a fresh Node process (dist/ when current, else the sources). */
async function freshProcessCreateMs(runRoot: string, dist: boolean): Promise<number> {
  const store = dist ? path.join(root, 'dist', 'runtime', 'run-store.js') : path.join(root, 'src', 'runtime', 'run-store.ts');
  const script = `const { createRun } = await import(${JSON.stringify(pathToFileURL(store).href)});
const started = performance.now();
await createRun(${JSON.stringify(runRoot)}, ${JSON.stringify(OPTIONS)});
console.log(performance.now() - started);`;
  const times: number[] = [];
  for (let round = 0; round < PROCESS_ROUNDS; round += 1) {
    const run = await runProcess(process.execPath, [...(dist ? [] : ['--import', 'tsx']), '--input-type=module', '-e', script], { env: process.env, cwd: root });
    times.push(Number(run.stdout.trim()));
  }
  return median(times);
}

/** One attempt's run store calls: the milliseconds of `createRun` and of `updateRun`. */
async function attemptMs(runRoot: string): Promise<{ create: number; update: number }> {
  const started = performance.now();
  const run = await createRun(runRoot, OPTIONS);
  const create = performance.now() - started;
  const attempt = await reserveAttempt(run.run_dir);
  fs.writeFileSync(path.join(run.run_dir, '.audit', `meta.${attempt}.json`), '{"status":"finished"}\n');
  const updating = performance.now();
  await updateRun(runRoot, run.run_id, { session_id: 'thread', last_completion: 'completed' }, attempt);
  return { create, update: performance.now() - updating };
}

/** The first `createRun` of a process: the index log replaced by a copy this process has not read. */
async function firstReadMs(runRoot: string): Promise<number> {
  const log = path.join(runRoot, 'index.jsonl');
  fs.copyFileSync(log, `${log}.copy`);
  fs.renameSync(`${log}.copy`, log);
  const started = performance.now();
  await createRun(runRoot, OPTIONS);
  return performance.now() - started;
}

/** Prints and returns the run store figures for each number of runs already in the store. */
export async function benchRunStore(sizes: readonly number[] = [0, 300, 1_000, 5_000]): Promise<BenchRow[]> {
  const scratch = new Scratch('runstore');
  const rows: BenchRow[] = [];
  const dist = await distIsCurrent();
  const home = scratch.dir('home');
  try {
    for (const count of sizes) {
      // A data dir's run root, so that the command finds it (SKILL_RUNNER_DATA_DIR).
      const runRoot = path.join(scratch.dir(`data-${count}`), 'harness_runs');
      fs.mkdirSync(runRoot);
      await fillRunRoot(runRoot, count);
      await attemptMs(runRoot);
      const rounds: Array<{ create: number; update: number }> = [];
      for (let round = 0; round < ROUNDS; round += 1) rounds.push(await attemptMs(runRoot));
      const first: number[] = [];
      for (let round = 0; round < FIRST_READ_ROUNDS; round += 1) first.push(await firstReadMs(runRoot));
      const create = median(rounds.map((r) => r.create));
      const update = median(rounds.map((r) => r.update));
      const cold = median(first);
      const fresh = await freshProcessCreateMs(runRoot, dist);
      const listing = await runsCliMs(runRoot, home);
      const bytes = fs.statSync(path.join(runRoot, 'index.jsonl')).size;
      console.log(`run store, ${String(count).padStart(5)} runs: createRun ${create.toFixed(2)} ms, updateRun ${update.toFixed(2)} ms (warm, median of ${ROUNDS}); first createRun of a process ${cold.toFixed(2)} ms, in a fresh process ${fresh.toFixed(2)} ms; \`runs --json\` ${listing.toFixed(0)} ms; index ${(bytes / 1024).toFixed(0)} KiB`);
      const row = (what: string, ms: number, note: string): BenchRow => ({ bench: 'runstore', case: `${what}, ${count} runs`, harness: `${ms.toFixed(2)} ms`, reference: null, ratio: null, target: null, note });
      rows.push(
        row('createRun', create, `warm process, median of ${ROUNDS}`),
        row('updateRun', update, `warm process, after a finished attempt, median of ${ROUNDS}`),
        row('first createRun', cold, `reads and validates the whole index (its first read in this process, whose code is warm), median of ${FIRST_READ_ROUNDS}; index ${(bytes / 1024).toFixed(0)} KiB`),
        row('first createRun, fresh process', fresh, `the same in a new Node process, as the CLI's start runs it (${dist ? 'dist/' : 'src/ through tsx'}), median of ${PROCESS_ROUNDS}`),
        row('`runs --json`', listing, `the whole command (${dist ? 'dist/' : 'src/ through tsx'}): the index, a rescan of every run directory, each attempt's meta checked for an orphan; median of ${PROCESS_ROUNDS}`),
      );
    }
    return rows;
  } finally {
    scratch.dispose();
  }
}
