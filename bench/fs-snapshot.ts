/**
 * fs snapshot benchmark: `snapshotTree` before + `snapshotTree` after + `diffSnapshots` of a run directory holding
 * 1k, 10k and 50k small files, against the same on an empty directory (issue 13: ≤ 100 ms added for 10k files).
 * Median of 5 rounds, wall clock and CPU time (the CPU figure is steadier on a shared machine). "warm" is a later
 * attempt in the same process (the before-snapshot finds the hashes the previous after-snapshot took, as in a
 * Vitest worker); "cold" is the first attempt of a fresh process (the CLI's case): every file is read once.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import * as snapshot from '../src/runtime/fs-snapshot.js';
import type { BenchRow } from './figures.js';

const ROUNDS = 5;
const FILES_PER_DIR = 100;

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

/** A tree of `count` small files, `FILES_PER_DIR` per directory. */
function makeTree(count: number): string {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'ah-bench-snap-'));
  for (let i = 0; i < count; i += 1) {
    const dir = path.join(root, `d${String(Math.floor(i / FILES_PER_DIR)).padStart(4, '0')}`);
    if (i % FILES_PER_DIR === 0) fs.mkdirSync(dir);
    fs.writeFileSync(path.join(dir, `f${i}.txt`), `file ${i}\n${'x'.repeat(64)}\n`);
  }
  return root;
}

/** Wall and CPU (user + system, every thread) milliseconds of one measured piece of work. */
interface Timing {
  wall: number;
  cpu: number;
}

/** Timing of one attempt's snapshot + snapshot + diff of `root`; `cold` first forgets remembered hashes. */
async function attemptMs(root: string, cold: boolean): Promise<Timing> {
  // Older fs-snapshot.ts has no hash cache: every round is cold there.
  if (cold) (snapshot as { clearHashCache?: () => void }).clearHashCache?.();
  const started = performance.now();
  const cpuStarted = process.cpuUsage();
  const before = await snapshot.snapshotTree(root);
  const after = await snapshot.snapshotTree(root);
  const diff = snapshot.diffSnapshots(before, after);
  const wall = performance.now() - started;
  const cpu = process.cpuUsage(cpuStarted);
  if (diff.created.length + diff.modified.length + diff.deleted.length > 0) throw new Error(`bench: unexpected diff in ${root}`);
  return { wall, cpu: (cpu.user + cpu.system) / 1000 };
}

/** Medians of `ROUNDS` attempts after one unmeasured warm-up. */
async function medianMs(root: string, cold: boolean): Promise<Timing> {
  await attemptMs(root, cold);
  const times: Timing[] = [];
  for (let round = 0; round < ROUNDS; round += 1) times.push(await attemptMs(root, cold));
  return { wall: median(times.map((t) => t.wall)), cpu: median(times.map((t) => t.cpu)) };
}

/**
 * Prints snapshot + diff time for 1k, 10k and 50k small files against an empty directory, cold and warm; returns
 * a row per case (ratio: the milliseconds added over the empty directory, the figure the target is stated in).
 */
export async function benchFsSnapshot(sizes: readonly number[] = [1_000, 10_000, 50_000]): Promise<BenchRow[]> {
  const rows: BenchRow[] = [];
  const empty = fs.mkdtempSync(path.join(os.tmpdir(), 'ah-bench-snap-empty-'));
  try {
    const emptyMs = await medianMs(empty, true);
    for (const count of sizes) {
      const root = makeTree(count);
      try {
        for (const cold of [true, false]) {
          const { wall, cpu } = await medianMs(root, cold);
          const added = wall - emptyMs.wall;
          console.log(`fs snapshot+diff: ${String(count).padStart(6)} files ${cold ? 'cold' : 'warm'}: ${wall.toFixed(1)} ms (cpu ${cpu.toFixed(0)} ms) vs empty ${emptyMs.wall.toFixed(2)} ms → +${added.toFixed(1)} ms, ×${(wall / emptyMs.wall).toFixed(0)}${count > 20_000 ? ' [past maxFiles 20000: truncated]' : ''}`);
          rows.push({
            bench: 'fs-snapshot', case: `${count} files ${cold ? 'cold' : 'warm'}`, harness: `${wall.toFixed(1)} ms`, reference: `${emptyMs.wall.toFixed(2)} ms`,
            ratio: `+${added.toFixed(1)} ms`, target: count === 10_000 ? '≤ +100 ms' : null,
            note: `snapshot + snapshot + diff, median of ${ROUNDS}; CPU ${cpu.toFixed(0)} ms; reference: empty dir${count > 20_000 ? '; past maxFiles 20000: truncated' : ''}`,
          });
        }
      } finally {
        fs.rmSync(root, { recursive: true, force: true });
      }
    }
  } finally {
    fs.rmSync(empty, { recursive: true, force: true });
  }
  return rows;
}
