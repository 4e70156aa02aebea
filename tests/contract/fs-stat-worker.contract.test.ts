/**
 * The stat worker (`fs-stat-worker.ts`) and the snapshots that share their lstats with it: a snapshot made with the
 * worker equals one made without it, whoever took which batch, when the worker dies in the middle, and for files
 * written in the racy window; the claims give each batch to one thread; an idle worker keeps no process alive.
 */
import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { FsSnapshotSchema, type FsSnapshot } from '../../src/protocol/index.js';
import { clearHashCache, SHARE_MIN_FILES, snapshotTree, startSnapshot } from '../../src/runtime/fs-snapshot.js';
import { KIND_FILE, KIND_GONE, KIND_SYMLINK, shareStats, STAT_FIELDS, statWorkerCounts, statWorkerReady, stopStatWorker } from '../../src/runtime/fs-stat-worker.js';

const REPO = path.resolve(import.meta.dirname, '../..');

let dir: string;
beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ah-statw-'));
  // Three times the sharing threshold, in directories of uneven size, with symlinks, a FIFO and an empty directory.
  for (let i = 0; i < 3 * SHARE_MIN_FILES; i += 1) {
    const sub = path.join(dir, `d${i % 7}`, i % 3 === 0 ? 'deep' : '');
    fs.mkdirSync(sub, { recursive: true });
    fs.writeFileSync(path.join(sub, `f${i}.txt`), `file ${i}\n`.repeat(i % 5));
  }
  fs.symlinkSync('d0/f0.txt', path.join(dir, 'link'));
  fs.symlinkSync('nowhere', path.join(dir, 'd3', 'broken'));
  fs.mkdirSync(path.join(dir, 'empty'));
  spawnSyncMkfifo(path.join(dir, 'd1', 'fifo'));
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));
afterEach(async () => {
  clearHashCache();
  await stopStatWorker();
});

function spawnSyncMkfifo(file: string): void {
  expect(spawnSync('mkfifo', [file]).status).toBe(0);
}

/** The worker, started and waited for (it starts in the background on first use). */
async function readyWorker(): Promise<void> {
  for (let tries = 0; !statWorkerReady(); tries += 1) {
    if (tries > 500) throw new Error('the stat worker did not start within 5 s');
    await sleep(10);
  }
}

/** A snapshot without `taken_at` (the only field two snapshots of an unchanged tree may differ in). */
const comparable = (snapshot: FsSnapshot): Omit<FsSnapshot, 'taken_at'> => {
  const { taken_at: _, ...rest } = FsSnapshotSchema.parse(snapshot);
  return rest;
};

/** A snapshot made on this thread alone: the worker stopped, and this first listing starts it without waiting. */
async function snapshotAlone(root: string): Promise<FsSnapshot> {
  await stopStatWorker();
  clearHashCache();
  const before = statWorkerCounts();
  const snapshot = await snapshotTree(root);
  expect(statWorkerCounts()).toEqual(before);
  return snapshot;
}

describe('snapshots with the stat worker', () => {
  it('equal the snapshot made without it, and the worker made some of the stats', async () => {
    const alone = await snapshotAlone(dir);
    expect(alone.entries).toHaveLength(3 * SHARE_MIN_FILES + 2);
    await readyWorker();
    clearHashCache();
    const before = statWorkerCounts();
    const shared = await snapshotTree(dir);
    const after = statWorkerCounts();
    expect(after.answered).toBeGreaterThan(before.answered);
    expect(after.abandoned).toBe(before.abandoned);
    expect(comparable(shared)).toEqual(comparable(alone));
  });

  it('equal it when the worker is stopped while the listing is under way: its batches are stat\'ed here', async () => {
    const alone = await snapshotAlone(dir);
    await readyWorker();
    clearHashCache();
    const before = statWorkerCounts();
    const pending = snapshotTree(dir);
    // The listing runs in slices; after its first, batches are out to the worker.
    await new Promise((resolve) => setImmediate(resolve));
    await stopStatWorker();
    const snapshot = await pending;
    expect(statWorkerCounts().abandoned).toBeGreaterThan(before.abandoned);
    expect(comparable(snapshot)).toEqual(comparable(alone));
    // Stopped, not failed: the next big listing starts a worker again.
    expect(statWorkerReady()).toBe(false);
    await readyWorker();
  });

  it('hash a file the worker listed within the racy window at once, as the listing\'s own thread does', async () => {
    const racy = fs.mkdtempSync(path.join(os.tmpdir(), 'ah-statw-racy-'));
    try {
      for (let i = 0; i < SHARE_MIN_FILES + 1_000; i += 1) fs.writeFileSync(path.join(racy, `z${String(i).padStart(5, '0')}.txt`), String(i));
      await sleep(200);
      await readyWorker();
      // Sorted first, so it is in the first batch, which the worker takes whenever it takes any.
      fs.writeFileSync(path.join(racy, 'a.txt'), 'listed');
      const before = statWorkerCounts();
      const started = await startSnapshot(racy, { hashLimit: 0 });
      expect(statWorkerCounts().answered).toBeGreaterThan(before.answered);
      const listed = started.listed.entries.find((entry) => entry.path === 'a.txt');
      expect(listed?.sha256).toBe(createHash('sha256').update('listed').digest('hex'));
      // Past the hash limit every other file is left unread.
      expect(started.listed.entries.filter((entry) => entry.sha256 !== null).map((entry) => entry.path)).toEqual(['a.txt']);
      await started.finish();
    } finally {
      fs.rmSync(racy, { recursive: true, force: true });
    }
  });

  it('truncate past maxFiles as the snapshot without the worker does', async () => {
    const alone = comparable(await snapshotAlone(dir).then(() => snapshotTree(dir, { maxFiles: 2_500 })));
    await readyWorker();
    clearHashCache();
    const shared = comparable(await snapshotTree(dir, { maxFiles: 2_500 }));
    expect(shared.truncated).toBe(true);
    expect(shared.entries).toHaveLength(2_500);
    expect(shared).toEqual(alone);
  });
});

describe('shareStats', () => {
  it('gives each batch to one thread: what the caller claims, the worker never answers', async () => {
    await readyWorker();
    const files = fs.readdirSync(path.join(dir, 'd2')).filter((name) => name.endsWith('.txt')).map((name) => path.join(dir, 'd2', name));
    const batches = Array.from({ length: 8 }, (_, index) => files.slice(index * 50, index * 50 + 50));
    const before = statWorkerCounts();
    const share = shareStats(batches.length)!;
    expect(share).not.toBeNull();
    for (const batch of batches) share.offer(batch);
    // The first batch is the worker's (nothing is claimed here yet); then this thread claims from the last one back.
    await share.stats(0);
    const mine = batches.map(() => false);
    for (let index = batches.length - 1; index >= 0 && share.claim(index); index -= 1) mine[index] = true;
    expect(mine[0]).toBe(false);
    const answers = await Promise.all(batches.map((_, index) => share.stats(index)));
    share.close();
    // One more batch, answered after every message before it was handled: then the counts are final.
    const last = shareStats(1)!;
    last.offer([files[0]!]);
    await last.stats(0);
    last.close();
    expect(statWorkerCounts().answered - before.answered).toBe(mine.filter((taken) => !taken).length + 1);
    for (const [index, batch] of batches.entries()) {
      if (mine[index]) {
        expect(answers[index]).toBeNull();
        continue;
      }
      const stats = answers[index]!;
      expect(stats).toHaveLength(batch.length * STAT_FIELDS);
      for (const [at, file] of batch.entries()) {
        const stat = fs.lstatSync(file);
        expect([...stats.subarray(at * STAT_FIELDS, (at + 1) * STAT_FIELDS)]).toEqual([KIND_FILE, stat.dev, stat.ino, stat.size, stat.mtimeMs, stat.ctimeMs]);
      }
    }
    expect(() => share.offer([])).toThrow(RangeError);
  });

  it('reports a symlink, a path that is gone, and a directory by their kinds', async () => {
    await readyWorker();
    const share = shareStats(1)!;
    share.offer([path.join(dir, 'link'), path.join(dir, 'gone'), path.join(dir, 'empty')]);
    const stats = (await share.stats(0))!;
    share.close();
    expect(stats[0]).toBe(KIND_SYMLINK);
    expect(stats[STAT_FIELDS]).toBe(KIND_GONE);
    expect(stats[2 * STAT_FIELDS]).toBe(3);
  });

  it('is null until the worker runs: the first call starts it', async () => {
    await stopStatWorker();
    expect(shareStats(1)).toBeNull();
    await readyWorker();
    expect(shareStats(1)).not.toBeNull();
  });
});

/** Runs `lines` (TypeScript, with the snapshot and worker modules imported) in a child Node; its stdout once it exits by itself. */
async function runChild(lines: readonly string[]): Promise<string> {
  const script = path.join(dir, '..', `ah-statw-child-${process.pid}-${Math.random().toString(36).slice(2)}.mts`);
  fs.writeFileSync(script, [
    `import { snapshotTree } from ${JSON.stringify(path.join(REPO, 'src/runtime/fs-snapshot.ts'))};`,
    `import { statWorkerCounts, statWorkerReady } from ${JSON.stringify(path.join(REPO, 'src/runtime/fs-stat-worker.ts'))};`,
    ...lines,
  ].join('\n'));
  try {
    const child = spawn(process.execPath, ['--import', 'tsx', script], { cwd: REPO, stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => { out += chunk.toString(); });
    const code = await new Promise<number | null>((resolve, reject) => {
      const timer = setTimeout(() => { child.kill('SIGKILL'); reject(new Error('the child did not exit within 30 s: the worker kept it alive')); }, 30_000);
      child.on('exit', (exitCode) => { clearTimeout(timer); resolve(exitCode); });
    });
    expect(code).toBe(0);
    return out;
  } finally {
    fs.rmSync(script, { force: true });
  }
}

describe('the worker and the process', () => {
  it('keeps no process alive once its snapshots are done', async () => {
    const out = await runChild([
      `await snapshotTree(${JSON.stringify(dir)});`,
      'while (!statWorkerReady()) await new Promise((resolve) => setTimeout(resolve, 10));',
      `await snapshotTree(${JSON.stringify(dir)});`,
      'console.log(JSON.stringify(statWorkerCounts()));',
    ]);
    expect(JSON.parse(out).answered).toBeGreaterThan(0);
  });

  it('keeps no process alive that started it and never used it (one big snapshot, then nothing)', async () => {
    const out = await runChild([
      `const snapshot = await snapshotTree(${JSON.stringify(dir)});`,
      'console.log(JSON.stringify({ entries: snapshot.entries.length, ...statWorkerCounts() }));',
    ]);
    expect(JSON.parse(out)).toEqual({ entries: 3 * SHARE_MIN_FILES + 2, answered: 0, abandoned: 0 });
  });
});
