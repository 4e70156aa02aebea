/**
 * fs snapshot benchmark: `snapshotTree` before + `snapshotTree` after + `diffSnapshots` of a run directory holding
 * 1k, 10k and 50k small files, against the same on an empty directory (issue 13: ≤ 100 ms added for 10k files).
 * Median of 5 rounds, wall clock and CPU time (the CPU figure is steadier on a shared machine). "warm" is a later
 * attempt in the same process (the before-snapshot finds the hashes the previous after-snapshot took, as in a
 * Vitest worker); "cold" is the first attempt of a fresh process (the CLI's case): every file is read once.
 *
 * "cold, deferred" is the attempt as the harness runs it with `startSnapshot`: the before-snapshot's listing, then
 * (the engine's run) its `finish()` hashing in the background, then the after-snapshot + diff. The critical path is
 * the listing plus the after-snapshot and diff; `finish()` is printed apart: it overlaps the engine's run, and
 * delays the attempt only by whatever of it is left when the engine exits.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import * as snapshot from '../src/runtime/fs-snapshot.js';
import type { FsDiff } from '../src/protocol/index.js';
import { median, type BenchRow } from './figures.js';

const ROUNDS = 5;
const FILES_PER_DIR = 100;

/** Writes `count` small files (~75 bytes) into the existing directory `root`, `FILES_PER_DIR` per subdirectory. */
export function fillTree(root: string, count: number): void {
  for (let i = 0; i < count; i += 1) {
    const dir = path.join(root, `d${String(Math.floor(i / FILES_PER_DIR)).padStart(4, '0')}`);
    if (i % FILES_PER_DIR === 0) fs.mkdirSync(dir);
    fs.writeFileSync(path.join(dir, `f${i}.txt`), `file ${i}\n${'x'.repeat(64)}\n`);
  }
}

/** A new temporary tree of `count` small files ({@link fillTree}). */
function makeTree(count: number): string {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'ah-bench-snap-'));
  fillTree(root, count);
  return root;
}

/** Wall and CPU (user + system, every thread) milliseconds of one measured piece of work. */
interface Timing {
  wall: number;
  cpu: number;
}

/** A point in time, wall and CPU, to measure a {@link Timing} from. */
interface Mark {
  wall: number;
  cpu: NodeJS.CpuUsage;
}

function mark(): Mark {
  return { wall: performance.now(), cpu: process.cpuUsage() };
}

/** The timing from `from` to `to` (to now when absent). */
function since(from: Mark, to: Mark = mark()): Timing {
  return { wall: to.wall - from.wall, cpu: (to.cpu.user - from.cpu.user + to.cpu.system - from.cpu.system) / 1000 };
}

function sum(a: Timing, b: Timing): Timing {
  return { wall: a.wall + b.wall, cpu: a.cpu + b.cpu };
}

function assertUnchanged(root: string, diff: FsDiff): void {
  if (diff.created.length + diff.modified.length + diff.deleted.length > 0) throw new Error(`bench: unexpected diff in ${root}`);
}

/** Timing of one attempt's snapshot + snapshot + diff of `root`; `cold` first forgets remembered hashes. */
async function attemptMs(root: string, cold: boolean): Promise<{ total: Timing }> {
  // Older fs-snapshot.ts has no hash cache: every round is cold there.
  if (cold) (snapshot as { clearHashCache?: () => void }).clearHashCache?.();
  const started = mark();
  const before = await snapshot.snapshotTree(root);
  const after = await snapshot.snapshotTree(root);
  const diff = snapshot.diffSnapshots(before, after);
  const total = since(started);
  assertUnchanged(root, diff);
  return { total };
}

/**
 * Timing of one cold attempt whose before-snapshot is `startSnapshot`: `critical` is the listing plus the
 * after-snapshot and diff, `background` the `finish()` awaited between them (where the engine would run).
 */
async function deferredAttemptMs(root: string): Promise<{ critical: Timing; background: Timing }> {
  snapshot.clearHashCache();
  const started = mark();
  const pending = await snapshot.startSnapshot(root);
  const listed = mark();
  const before = await pending.finish();
  const finished = mark();
  const diff = snapshot.diffSnapshots(before, await snapshot.snapshotTree(root));
  const critical = sum(since(started, listed), since(finished));
  assertUnchanged(root, diff);
  return { critical, background: since(listed, finished) };
}

/**
 * The floor of any stat-based snapshot + snapshot on one thread: what two passes cost that only list `root`
 * (readdir) and lstat every file in it, keeping nothing. On the bench machine an lstat is a 2–3 µs system call (a
 * VM's), so 20,000 of them alone take ~50 ms, half the budget for 10,000 files. A snapshot of 2,000 files or
 * more shares its lstats with a worker thread (`fs-stat-worker.ts`), so on two CPUs it can take less.
 */
async function floorMs(root: string): Promise<{ total: Timing }> {
  const started = mark();
  for (let pass = 0; pass < 2; pass += 1) {
    const walk = (dir: string): void => {
      for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
        const child = `${dir}/${entry.name}`;
        if (entry.isDirectory()) walk(child);
        else fs.lstatSync(child, { throwIfNoEntry: false });
      }
    };
    walk(root);
  }
  return { total: since(started) };
}

/** Medians of each timing of `ROUNDS` runs of `measure`, after one unmeasured warm-up. */
async function medianMs<K extends string>(measure: () => Promise<Record<K, Timing>>): Promise<Record<K, Timing>> {
  await measure();
  const runs: Record<K, Timing>[] = [];
  for (let round = 0; round < ROUNDS; round += 1) runs.push(await measure());
  const keys = Object.keys(runs[0]!) as K[];
  return Object.fromEntries(keys.map((key) => [key, { wall: median(runs.map((r) => r[key].wall)), cpu: median(runs.map((r) => r[key].cpu)) }])) as Record<K, Timing>;
}

/**
 * Prints snapshot + diff time for 1k, 10k and 50k small files against an empty directory, cold and warm, and the
 * cold attempt with a deferred before-snapshot (critical path and background apart); returns a row per case (ratio:
 * the milliseconds added over the empty directory, the figure the target is stated in).
 */
export async function benchFsSnapshot(sizes: readonly number[] = [1_000, 10_000, 50_000]): Promise<BenchRow[]> {
  const rows: BenchRow[] = [];
  const empty = fs.mkdtempSync(path.join(os.tmpdir(), 'ah-bench-snap-empty-'));
  try {
    const emptyMs = (await medianMs(() => attemptMs(empty, true))).total;
    const emptyDeferred = await medianMs(() => deferredAttemptMs(empty));
    for (const count of sizes) {
      const root = makeTree(count);
      try {
        for (const cold of [true, false]) {
          const { wall, cpu } = (await medianMs(() => attemptMs(root, cold))).total;
          const added = wall - emptyMs.wall;
          console.log(`fs snapshot+diff: ${String(count).padStart(6)} files ${cold ? 'cold' : 'warm'}: ${wall.toFixed(1)} ms (cpu ${cpu.toFixed(0)} ms) vs empty ${emptyMs.wall.toFixed(2)} ms → +${added.toFixed(1)} ms, ×${(wall / emptyMs.wall).toFixed(0)}${count > 20_000 ? ' [past maxFiles 20000: truncated]' : ''}`);
          rows.push({
            bench: 'fs-snapshot', case: `${count} files ${cold ? 'cold' : 'warm'}`, harness: `${wall.toFixed(1)} ms`, reference: `${emptyMs.wall.toFixed(2)} ms`,
            ratio: `+${added.toFixed(1)} ms`, target: null,
            note: `the module alone (the issue's figure is the attempt's, below): snapshot + snapshot + diff, median of ${ROUNDS}; CPU ${cpu.toFixed(0)} ms (every thread: from 2,000 files on, the lstats are shared with a worker thread, started by the warm-up); reference: empty dir${count > 20_000 ? '; past maxFiles 20000: truncated' : ''}`,
          });
        }
        rows.push(...deferredRows(count, await medianMs(() => deferredAttemptMs(root)), emptyDeferred));
        const floor = (await medianMs(() => floorMs(root))).total;
        console.log(`fs snapshot+diff: ${String(count).padStart(6)} files, the floor (readdir + lstat of every file, twice, nothing kept): ${floor.wall.toFixed(1)} ms (cpu ${floor.cpu.toFixed(0)} ms)`);
        rows.push({
          bench: 'fs-snapshot', case: `${count} files: the floor`, harness: `${floor.wall.toFixed(1)} ms`, reference: '-', ratio: '-', target: null,
          note: `two passes of readdir + lstat of every file on one thread, nothing kept: the system calls any stat-based snapshot + snapshot makes (from 2,000 files on, the snapshot shares its lstats with a worker thread, so it can take less), median of ${ROUNDS}; CPU ${floor.cpu.toFixed(0)} ms`,
        });
      } finally {
        fs.rmSync(root, { recursive: true, force: true });
      }
    }
  } finally {
    fs.rmSync(empty, { recursive: true, force: true });
  }
  return rows;
}

/** The rows (and printed lines) of the cold attempt with a deferred before-snapshot of `count` files. */
function deferredRows(count: number, measured: { critical: Timing; background: Timing }, empty: { critical: Timing; background: Timing }): BenchRow[] {
  const truncated = count > 20_000 ? '; past maxFiles 20000: truncated' : '';
  const parts = [
    { key: 'critical', label: 'critical path', note: 'ON the critical path: startSnapshot (listing) before the spawn + after-snapshot and diff after the engine exits' },
    { key: 'background', label: 'background finish()', note: 'OFF the critical path: the before-snapshot\'s hashing while the engine runs (waited for only if the engine exits sooner)' },
  ] as const;
  return parts.map(({ key, label, note }) => {
    const { wall, cpu } = measured[key];
    const added = wall - empty[key].wall;
    console.log(`fs snapshot+diff: ${String(count).padStart(6)} files cold, deferred, ${label}: ${wall.toFixed(1)} ms (cpu ${cpu.toFixed(0)} ms) vs empty ${empty[key].wall.toFixed(2)} ms → +${added.toFixed(1)} ms${truncated ? ' [past maxFiles 20000: truncated]' : ''}`);
    return {
      bench: 'fs-snapshot', case: `${count} files cold, deferred: ${label}`, harness: `${wall.toFixed(1)} ms`, reference: `${empty[key].wall.toFixed(2)} ms`,
      ratio: `+${added.toFixed(1)} ms`, target: null,
      note: `${note}; median of ${ROUNDS}; CPU ${cpu.toFixed(0)} ms; reference: empty dir${truncated}`,
    };
  });
}
