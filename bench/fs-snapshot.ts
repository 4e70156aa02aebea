/**
 * fs snapshot benchmark: `snapshotTree` before + `snapshotTree` after + `diffSnapshots` of a run directory holding
 * 1k, 10k and 50k small files, against the same on an empty directory (issue 13: ≤ 100 ms added for 10k files).
 * Median of 5 rounds. "warm" is a second attempt in the same process (the before-snapshot finds the hashes the
 * previous after-snapshot took); "cold" is the first attempt of a fresh process (the CLI's case).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import * as snapshot from '../src/runtime/fs-snapshot.js';

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

/** Milliseconds of one attempt's snapshot + snapshot + diff of `root`; `cold` first forgets cached hashes. */
async function attemptMs(root: string, cold: boolean): Promise<number> {
  // Older fs-snapshot.ts has no hash cache: every round is cold there.
  if (cold) (snapshot as { clearHashCache?: () => void }).clearHashCache?.();
  const started = performance.now();
  const before = await snapshot.snapshotTree(root);
  const after = await snapshot.snapshotTree(root);
  const diff = snapshot.diffSnapshots(before, after);
  const ms = performance.now() - started;
  if (diff.created.length + diff.modified.length + diff.deleted.length > 0) throw new Error(`bench: unexpected diff in ${root}`);
  return ms;
}

async function medianMs(root: string, cold: boolean): Promise<number> {
  await attemptMs(root, cold);
  const times: number[] = [];
  for (let round = 0; round < ROUNDS; round += 1) times.push(await attemptMs(root, cold));
  return median(times);
}

/** Prints snapshot + diff time for 1k, 10k and 50k small files against an empty directory, cold and warm. */
export async function benchFsSnapshot(sizes: readonly number[] = [1_000, 10_000, 50_000]): Promise<void> {
  const empty = fs.mkdtempSync(path.join(os.tmpdir(), 'ah-bench-snap-empty-'));
  try {
    const emptyMs = await medianMs(empty, true);
    for (const count of sizes) {
      const root = makeTree(count);
      try {
        for (const cold of [true, false]) {
          const ms = await medianMs(root, cold);
          console.log(`fs snapshot+diff: ${String(count).padStart(6)} files ${cold ? 'cold' : 'warm'}: ${ms.toFixed(1)} ms vs empty ${emptyMs.toFixed(2)} ms → +${(ms - emptyMs).toFixed(1)} ms (×${(ms / emptyMs).toFixed(0)})${count > 20_000 ? ' [past maxFiles 20000: truncated]' : ''}`);
        }
      } finally {
        fs.rmSync(root, { recursive: true, force: true });
      }
    }
  } finally {
    fs.rmSync(empty, { recursive: true, force: true });
  }
}
