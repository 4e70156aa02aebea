/**
 * The fs snapshot inside a whole attempt (issue 13: "an attempt in a run dir holding 10,000 small files vs an empty
 * one: ≤ 100 ms added for snapshot + diff of 10,000 files"). fs-snapshot.ts times the snapshot module alone; this
 * times a real codex attempt in this process (`runAttempt` as attempt.ts's `inProcessSetup` runs it: scripted model,
 * one shared server, the same command) whose run directory holds 1,000 or 10,000 small files (fs-snapshot.ts's
 * tree), against the same attempt in an empty directory. Here the before-snapshot's background hashing shares the
 * two CPUs with the engine and with the harness reading its output.
 *
 * - cold: a new run (`runDir`, as a provider's `cwd`) in a directory of files that exist already (written and flushed
 *   before the rounds), with no hash of it remembered: before each attempt the previous run's `.audit` is removed and
 *   the process forgets every remembered hash (`clearHashCache`), as a CLI command's fresh process finds a project.
 *   Every file is listed before the spawn (and, past `BEFORE_HASH_LIMIT`, left unread).
 * - warm: the next attempt of the same run in the same process (a Vitest test's second attempt). The engine touches
 *   none of the files, so the tree is as the previous after-snapshot left it and each hash is reused unread.
 * - fresh: as cold, in a new directory whose files were written and flushed just before (a checkout made for the
 *   attempt). Writing 10,000 files leaves the kernel work to do for a while after (the journal, the previous
 *   directory's removal), which slows the attempt's system calls and the engine alike; so each case writes as many
 *   files, the empty one and the smaller ones the rest into a directory beside the run's, and the difference is the
 *   snapshot's again.
 *
 * Then the bare codex turn in the cold case's trees (the engine's own share), and the command itself: `agent-harness
 * start --run-dir` (dist/) in a run of 10,000 files against one of none, each attempt a fresh process with the daemon
 * off, as in a CI job (cold code, no stat worker yet for its first listing). That row has no target: the issue's
 * figure is the attempt's, and outside CI the daemon runs the command's attempts warm.
 *
 * Paired rounds (attempt.ts's `rounds`: each case once per round, the order rotating); the figure is the median of
 * the per-round differences from the empty directory, with each side's median per step (`meta.timings.steps`).
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { startModelServer, type ModelServer } from '../src/model/index.js';
import { clearHashCache } from '../src/runtime/fs-snapshot.js';
import { AUDIT_DIR } from '../src/runtime/run-record.js';
import { readRunRecord } from '../src/runtime/run-store.js';
import { CODEX_ARGS, inProcessSetup, rounds, type AttemptPlace, type Case } from './attempt.js';
import { median, type BenchRow } from './figures.js';
import { fillTree } from './fs-snapshot.js';
import { bin, distIsCurrent, formatSteps, harnessEnv, measure, medianSteps, medians, projectDir, readAttempt, runDirFromOutput, runProcess, Scratch, type AttemptMeta, type Timing } from './util.js';

/** Paired rounds of each kind (after one warm-up of each case). */
export const FS_ATTEMPT_ROUNDS = 12;

/**
 * How long before a fresh attempt its files are written: past fs-hash-cache.ts's racy window (50 ms), inside which a
 * file is hashed before the engine starts. A project's files are older than that; the files written just now are not.
 */
const SETTLE_MS = 100;

/** The timings and metas of one case's rounds. */
interface Series {
  timings: Timing[];
  metas: AttemptMeta[];
}

/**
 * Where each attempt of a case with `count` files runs; `most` is the largest count of the kind's cases (the files
 * every fresh case writes).
 */
type Places = (scratch: Scratch, count: number, most: number) => () => AttemptPlace | Promise<AttemptPlace>;

/** Each call: a new run in a directory of `count` files made before the first, nothing of it remembered. */
function placeInExistingTree(scratch: Scratch, count: number): () => AttemptPlace {
  const dir = scratch.dir(`cold-${count}`);
  fillTree(dir, count);
  execFileSync('sync', ['-f', dir]);
  return () => {
    fs.rmSync(path.join(dir, AUDIT_DIR), { recursive: true, force: true });
    clearHashCache();
    return { runDir: dir };
  };
}

/**
 * Each call: a new run in a new directory of `count` files written just before (the previous directory removed),
 * `most - count` more written beside it.
 */
function placeInNewTree(scratch: Scratch, count: number, most: number): () => Promise<AttemptPlace> {
  let previous: string[] = [];
  return async () => {
    for (const dir of previous) fs.rmSync(dir, { recursive: true, force: true });
    const [dir, beside] = [scratch.dir(`fresh-${count}`), scratch.dir(`beside-${count}`)];
    previous = [dir, beside];
    fillTree(dir, count);
    fillTree(beside, most - count);
    // On disk before the attempt: else the attempt's first fsync (its meta) waits for the kernel to write out
    // 10,000 new files.
    execFileSync('sync', ['-f', dir]);
    await sleep(SETTLE_MS);
    return { runDir: dir };
  };
}

/** The first call: a new run in a directory of `count` files; every later call: the next attempt of that run. */
function placeInSameRun(scratch: Scratch, count: number): () => AttemptPlace {
  const dir = scratch.dir(`warm-${count}`);
  fillTree(dir, count);
  return () => {
    const run = readRunRecord(dir);
    return run ? { run } : { runDir: dir };
  };
}

/** The kinds measured: how each attempt's run directory comes to be, whether the target applies, and the row's note. */
const KINDS: ReadonlyArray<{ name: string; places: Places; target: boolean; note: string }> = [
  { name: 'cold', places: placeInExistingTree, target: true, note: 'cold: a new run in a directory of files that exist already, nothing of it remembered (as a CLI command\'s fresh process finds a project); every file listed before the spawn' },
  { name: 'warm', places: placeInSameRun, target: true, note: 'warm: the next attempt of the same run in the same process (a Vitest test\'s second attempt); the engine touched no file, so every hash is reused unread' },
  { name: 'fresh', places: placeInNewTree, target: false, note: `fresh: as cold, in a new directory whose files were written and flushed ${SETTLE_MS} ms before (a checkout made for the attempt); every case writes as many files, the rest beside the run directory, so both sides meet the same kernel work after the writes` },
];

/** Runs the cases of one kind (an empty directory and each size) in paired rounds; the series by file count. */
async function measureKind(scratch: Scratch, server: ModelServer, places: Places, sizes: readonly number[]): Promise<Map<number, Series>> {
  const cases: Case[] = [];
  const most = Math.max(...sizes);
  for (const count of [0, ...sizes]) {
    const { inProcessCase } = await inProcessSetup(scratch, server, { place: places(scratch, count, most) });
    cases.push({ ...inProcessCase, name: String(count) });
  }
  const results = await rounds(cases, FS_ATTEMPT_ROUNDS);
  return new Map([0, ...sizes].map((count) => [count, results.get(String(count))!]));
}

/**
 * The engine's own share of the figures: the bare codex turn, no harness (the command the in-process attempt's
 * engine gets, from the user's shell), in a directory of `count` files (the cold case's), against an empty one;
 * paired rounds. Codex might take longer in a directory of many files.
 */
async function measureBare(scratch: Scratch, server: ModelServer, sizes: readonly number[]): Promise<Map<number, Timing[]>> {
  const { bare } = await inProcessSetup(scratch, server, {});
  const cases: Case[] = [0, ...sizes].map((count) => {
    const place = placeInExistingTree(scratch, count);
    return {
      name: String(count),
      run: async () => {
        const { runDir } = (await place()) as { runDir: string };
        return { timing: (await measure(() => runProcess(bare.file, bare.args, { env: bare.env, cwd: runDir }))).timing };
      },
    };
  });
  const results = await rounds(cases, FS_ATTEMPT_ROUNDS);
  return new Map([0, ...sizes].map((count) => [count, results.get(String(count))!.timings]));
}

/** Pairs of the command's case: fresh processes cost more to set up, and the figure is only shown, not targeted. */
const CLI_ROUNDS = 10;

/**
 * The same through the command, each time a fresh process (dist/, the daemon off, as in a CI job): `agent-harness
 * start --run-dir <run> codex …` adds an attempt to a run whose directory holds `count` files (the run made once,
 * before the rounds, with `--template`), against the same in a run with an empty directory. A fresh process
 * remembers no hash, runs its code cold, and has no stat worker for its first listing (it starts one). Null when
 * dist/ is not the build of src/.
 */
async function measureCli(scratch: Scratch, sizes: readonly number[]): Promise<Map<number, Series> | null> {
  if (!(await distIsCurrent())) return null;
  const env = harnessEnv(scratch.dir('data'), scratch.dir('home'));
  const project = projectDir(scratch);
  const start = async (args: readonly string[]): Promise<{ timing: Timing; runDir: string }> => {
    const { timing, value } = await measure(() => runProcess(process.execPath, [bin, 'start', ...args, 'codex', ...CODEX_ARGS], { env, cwd: project }));
    if (value.code !== 0) throw new Error(`bench: agent-harness start exited ${value.code}:\n${value.stderr.slice(-2000)}`);
    return { timing, runDir: runDirFromOutput(`${value.stdout}\n${value.stderr}`) };
  };
  const latest = (runDir: string): AttemptMeta => {
    const attempts = fs.readdirSync(path.join(runDir, AUDIT_DIR)).map((name) => /^meta\.(\d+)\.json$/.exec(name)?.[1]).filter((n): n is string => n !== undefined).map(Number);
    return readAttempt(runDir, Math.max(...attempts));
  };
  const cases: Case[] = [];
  for (const count of [0, ...sizes]) {
    const tree = scratch.dir(`cli-tree-${count}`);
    fillTree(tree, count);
    const { runDir } = await start(count > 0 ? ['--template', tree, '--no-git'] : []);
    execFileSync('sync', ['-f', runDir]);
    cases.push({ name: String(count), run: async () => {
      const { timing } = await start(['--run-dir', runDir]);
      return { timing, meta: latest(runDir) };
    } });
  }
  const results = await rounds(cases, CLI_ROUNDS);
  return new Map([0, ...sizes].map((count) => [count, results.get(String(count))!]));
}

/** The row (and printed line) of the command's attempt in a run of `count` files against an empty one. */
function cliRow(count: number, files: Series, empty: Series): BenchRow {
  const added = median(files.timings.map((t, i) => t.wall - empty.timings[i]!.wall));
  const [mf, me] = [medians(files.timings), medians(empty.timings)];
  const [sf, se] = [medianSteps(files.metas.map((m) => m.timings?.steps)), medianSteps(empty.metas.map((m) => m.timings?.steps))];
  const plus = `${added >= 0 ? '+' : ''}${added.toFixed(0)} ms`;
  console.log(`  command (dist, fresh process, daemon off), ${String(count).padStart(5)} files vs empty: ${mf.wall.toFixed(0)} ms vs ${me.wall.toFixed(0)} ms → ${plus} (median of ${files.timings.length} per-round differences); steps ${snapshotSteps(sf, se)}`);
  return {
    bench: 'fs-snapshot', case: `agent-harness start --run-dir (dist, a fresh process, daemon off) in a run of ${count} files vs empty`, harness: `${mf.wall.toFixed(0)} ms`, reference: `${me.wall.toFixed(0)} ms`,
    ratio: plus, target: null,
    note: `the command as a CI job runs it (AGENT_HARNESS_DAEMON off): each attempt a fresh Node process, which remembers no hash, runs its code cold and has no stat worker for its first listing; outside CI the daemon runs it warm, as the rows above; wall medians; ratio: median of ${files.timings.length} per-round differences; steps (ms, median, files vs empty): ${snapshotSteps(sf, se)}`,
  };
}

/** The row (and printed line) of the bare codex turn in a new directory of `count` files against an empty one. */
function bareRow(count: number, files: Timing[], empty: Timing[]): BenchRow {
  const added = median(files.map((t, i) => t.wall - empty[i]!.wall));
  const [mf, me] = [medians(files), medians(empty)];
  const plus = `${added >= 0 ? '+' : ''}${added.toFixed(0)} ms`;
  console.log(`  bare codex (no harness), ${String(count).padStart(5)} files vs empty: ${mf.wall.toFixed(0)} ms vs ${me.wall.toFixed(0)} ms → ${plus} (median of ${files.length} per-round differences)`);
  return {
    bench: 'fs-snapshot', case: `bare codex turn (no harness) in ${count} files vs empty`, harness: `${mf.wall.toFixed(0)} ms`, reference: `${me.wall.toFixed(0)} ms`,
    ratio: plus, target: null,
    note: `the engine's own share of the rows above: the bare command in the cold case's directory of ${count} files; wall medians; ratio: median of ${files.length} per-round differences`,
  };
}

/** `fs_before 3 vs 1, engine 190 vs 170, fs_after 40 vs 2` (ms): the steps the snapshot shows in, files vs empty. */
function snapshotSteps(files: Record<string, number> | null, empty: Record<string, number> | null): string {
  const step = (name: string): string => `${name} ${files?.[name]?.toFixed(0) ?? '-'} vs ${empty?.[name]?.toFixed(0) ?? '-'}`;
  return ['fs_before', 'engine', 'fs_after'].map(step).join(', ');
}

/** The row (and printed lines) of `count` files against the empty directory, for one kind. */
function attemptRow(kind: (typeof KINDS)[number], count: number, files: Series, empty: Series): BenchRow {
  const added = median(files.timings.map((t, i) => t.wall - empty.timings[i]!.wall));
  const [mf, me] = [medians(files.timings), medians(empty.timings)];
  const [sf, se] = [medianSteps(files.metas.map((m) => m.timings?.steps)), medianSteps(empty.metas.map((m) => m.timings?.steps))];
  const ms = (value: number): string => `${value.toFixed(0)} ms`;
  const plus = `${added >= 0 ? '+' : ''}${ms(added)}`;
  console.log(`  ${kind.name}, ${String(count).padStart(5)} files vs empty: ${ms(mf.wall)} vs ${ms(me.wall)} → ${plus} (median of ${files.timings.length} per-round differences); cpu ${ms(mf.cpu)} vs ${ms(me.cpu)}`);
  for (const [side, steps] of [[`${count} files`, sf], ['empty', se]] as const) console.log(`    median steps, ${side}: ${steps ? formatSteps(steps) : 'no meta.timings.steps'}`);
  return {
    bench: 'fs-snapshot', case: `attempt (runAttempt) with ${count} files vs empty, ${kind.name}`, harness: ms(mf.wall), reference: ms(me.wall),
    ratio: plus, target: kind.target && count === 10_000 ? '≤ +100 ms' : null,
    note: `codex attempt, wall medians; ratio: median of ${files.timings.length} per-round differences; steps (ms, median, files vs empty): ${snapshotSteps(sf, se)}; CPU ${ms(mf.cpu)} vs ${ms(me.cpu)}; ${kind.note}`,
  };
}

/**
 * Prints what 1,000 and 10,000 small files in the run directory add to a whole in-process codex attempt, cold and
 * warm, against the same attempt in an empty directory; returns a row per size and kind (ratio: the milliseconds
 * added, the figure the target is stated in).
 */
export async function benchFsAttempt(sizes: readonly number[] = [1_000, 10_000]): Promise<BenchRow[]> {
  console.log(`fs snapshot in a whole attempt: codex runAttempt in a run dir of ${sizes.join(' / ')} small files vs an empty one (${FS_ATTEMPT_ROUNDS} paired rounds after a warm-up)`);
  const scratch = new Scratch('fs-attempt');
  const server = await startModelServer({});
  const rows: BenchRow[] = [];
  try {
    for (const kind of KINDS) {
      const series = await measureKind(scratch, server, kind.places, sizes);
      for (const count of sizes) rows.push(attemptRow(kind, count, series.get(count)!, series.get(0)!));
    }
    const bare = await measureBare(scratch, server, sizes);
    for (const count of sizes) rows.push(bareRow(count, bare.get(count)!, bare.get(0)!));
    const cli = await measureCli(scratch, sizes.filter((count) => count >= 10_000));
    if (cli) for (const count of [...cli.keys()].filter((count) => count > 0)) rows.push(cliRow(count, cli.get(count)!, cli.get(0)!));
    else console.log('  command (dist) not measured: dist/ is not the build of src/ (npm run build)');
  } finally {
    await server.close();
    scratch.dispose();
  }
  return rows;
}
