/**
 * snapshotTree / startSnapshot / diffSnapshots on temporary directories; every output is validated against the
 * protocol's zod schemas.
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FsDiffSchema, FsEntrySchema, FsSnapshotSchema } from '../../src/protocol/index.js';
import { recordHash, rememberedHashes, type RootHashes } from '../../src/runtime/fs-hash-cache.js';
import {
  clearHashCache,
  describeEntry,
  diffSnapshots,
  hashFile,
  snapshotTree,
  startSnapshot,
} from '../../src/runtime/fs-snapshot.js';
import { under } from '../../src/runtime/fs-tree-walk.js';

let dir: string;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ah-snap-'));
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));
afterEach(() => clearHashCache());

const sha256 = (text: string): string => createHash('sha256').update(text).digest('hex');
const write = (rel: string, content: string): void => {
  fs.mkdirSync(path.dirname(path.join(dir, rel)), { recursive: true });
  fs.writeFileSync(path.join(dir, rel), content);
};

describe('snapshotTree', () => {
  it('lists files and dot files, records symlinks without following them, and excludes .audit', async () => {
    write('.audit/meta.1.json', '{}');
    write('keep.txt', 'same');
    write('.hidden', 'h');
    write('.config/app/settings.json', '{"a":1}');
    write('sub/deep/file.txt', 'deep');
    fs.symlinkSync('/etc', path.join(dir, 'etc-link'));
    fs.symlinkSync('keep.txt', path.join(dir, 'file-link'));
    fs.symlinkSync('nowhere', path.join(dir, 'broken-link'));
    const snap = FsSnapshotSchema.parse(await snapshotTree(dir));
    expect(snap.root).toBe(dir);
    expect(snap.excluded).toEqual(['.audit', '.git']);
    expect(snap.truncated).toBe(false);
    expect(snap.entries.map((e) => `${e.path}:${e.type}`)).toEqual([
      '.config/app/settings.json:file',
      '.hidden:file',
      'broken-link:symlink',
      'etc-link:symlink',
      'file-link:symlink',
      'keep.txt:file',
      'sub/deep/file.txt:file',
    ]);
    const byPath = new Map(snap.entries.map((e) => [e.path, e]));
    expect(byPath.get('keep.txt')).toMatchObject({ size: 4, sha256: sha256('same') });
    expect(byPath.get('etc-link')).toMatchObject({ size: '/etc'.length, sha256: sha256('/etc') });
    expect(byPath.get('broken-link')?.sha256).toBe(sha256('nowhere'));
  });

  it('excludes top-level names and globs given, and nothing when exclude is empty', async () => {
    write('.audit/a', 'x');
    write('node_modules/pkg/index.js', 'x');
    write('debug.log', 'x');
    write('sub/debug.log', 'x');
    write('keep', 'x');
    const custom = await snapshotTree(dir, { exclude: ['node_modules', '*.log'] });
    expect(custom.excluded).toEqual(['node_modules', '*.log']);
    expect(custom.entries.map((e) => e.path)).toEqual(['.audit/a', 'keep', 'sub/debug.log']);
    const none = await snapshotTree(dir, { exclude: [] });
    expect(none.entries).toHaveLength(5);
  });

  it('marks a snapshot truncated past maxFiles, leaves large files unhashed, and can skip hashing', async () => {
    for (let i = 0; i < 5; i += 1) write(`f${i}`, 'x'.repeat(i * 10));
    const snap = FsSnapshotSchema.parse(await snapshotTree(dir, { maxFiles: 3, maxHashBytes: 15 }));
    expect(snap.truncated).toBe(true);
    expect(snap.entries.map((e) => e.path)).toEqual(['f0', 'f1', 'f2']);
    expect(snap.entries[1]?.sha256).toBe(sha256('x'.repeat(10)));
    expect(snap.entries[2]?.sha256).toBeNull();
    expect(snap.entries[2]?.size).toBe(20);
    const unhashed = await snapshotTree(dir, { hash: false });
    expect(unhashed.truncated).toBe(false);
    expect(unhashed.entries.every((e) => e.sha256 === null)).toBe(true);
  });

  it('skips FIFOs instead of blocking on them', async () => {
    write('plain', 'p');
    execFileSync('mkfifo', [path.join(dir, 'pipe')]);
    const snap = await snapshotTree(dir);
    expect(snap.entries.map((e) => e.path)).toEqual(['plain']);
  });

  it('gives no entries for a missing root', async () => {
    const snap = FsSnapshotSchema.parse(await snapshotTree(path.join(dir, 'missing')));
    expect(snap.entries).toEqual([]);
  });
});

describe('a file swapped by the agent between the listing and the read', () => {
  it('is never read through a link, nor waited on as a FIFO: the hash is refused at once', async () => {
    write('secret', 'host text');
    fs.symlinkSync(path.join(dir, 'secret'), path.join(dir, 'link'));
    execFileSync('mkfifo', [path.join(dir, 'fifo')]);
    await expect(hashFile(path.join(dir, 'link'))).rejects.toMatchObject({ code: 'ELOOP' });
    // A blocking open of a FIFO nobody writes would never return.
    await expect(hashFile(path.join(dir, 'fifo'))).rejects.toMatchObject({ code: 'EINVAL' });
    expect(await hashFile(path.join(dir, 'secret'))).toBe(sha256('host text'));
  });
});

describe('files vanishing during a snapshot', () => {
  it('leaves out a path that was listed but is gone when it is read', async () => {
    write('there', 'x');
    expect(FsEntrySchema.parse(await describeEntry(dir, 'there'))).toMatchObject({ path: 'there', type: 'file' });
    expect(await describeEntry(dir, 'gone')).toBeNull();
    expect(await describeEntry(dir, 'there/below')).toBeNull();
  });

  it('does not crash when files are deleted while the snapshot runs', async () => {
    for (let d = 0; d < 20; d += 1) for (let i = 0; i < 20; i += 1) write(`d${d}/f${i}`, 'x'.repeat(1000));
    const pending = snapshotTree(dir);
    const removing = (async () => {
      for (let d = 0; d < 20; d += 2) {
        await fs.promises.rm(path.join(dir, `d${d}`), { recursive: true, force: true });
        await new Promise((resolve) => setImmediate(resolve));
      }
    })();
    const [snap] = await Promise.all([pending, removing]);
    FsSnapshotSchema.parse(snap);
    expect(snap.entries.length).toBeGreaterThanOrEqual(200);
    expect(snap.entries.length).toBeLessThanOrEqual(400);
  });
});

describe('diffSnapshots', () => {
  it('reports created, modified and deleted files, sorted, ignoring .audit', async () => {
    write('.audit/meta.1.json', '{}');
    write('keep.txt', 'same');
    write('change.txt', 'v1');
    write('same-size.txt', 'aaaa');
    write('sub/deep/gone.txt', 'bye');
    write('z-gone.txt', 'bye');
    fs.symlinkSync('keep.txt', path.join(dir, 'link'));
    const before = FsSnapshotSchema.parse(await snapshotTree(dir));
    write('change.txt', 'v2 longer');
    write('same-size.txt', 'bbbb');
    fs.rmSync(path.join(dir, 'sub', 'deep', 'gone.txt'));
    fs.rmSync(path.join(dir, 'z-gone.txt'));
    fs.unlinkSync(path.join(dir, 'link'));
    fs.symlinkSync('change.txt', path.join(dir, 'link'));
    write('new.txt', 'n');
    write('a-new/file', 'n');
    write('.audit/meta.2.json', '{}');
    const diff = FsDiffSchema.parse(diffSnapshots(before, await snapshotTree(dir)));
    expect(diff).toEqual({
      root: dir,
      created: ['a-new/file', 'new.txt'],
      modified: ['change.txt', 'link', 'same-size.txt'],
      deleted: ['sub/deep/gone.txt', 'z-gone.txt'],
      engine_bookkeeping: [],
    });
    // An engine's own bookkeeping files are listed apart from the agent's changes.
    const apart = diffSnapshots(before, await snapshotTree(dir), ['new.txt', 'z-gone.txt']);
    expect(apart).toMatchObject({
      created: ['a-new/file'],
      deleted: ['sub/deep/gone.txt'],
      engine_bookkeeping: ['new.txt', 'z-gone.txt'],
    });
  });

  it('diffs snapshots whose entries are out of path order (not made by snapshotTree) as if they were sorted', async () => {
    write('a.txt', 'a');
    write('b/c.txt', 'c');
    write('b-d.txt', 'd');
    write('e.txt', 'e');
    const before = await snapshotTree(dir);
    write('b/c.txt', 'changed');
    fs.rmSync(path.join(dir, 'a.txt'));
    write('0-new.txt', 'n');
    const after = await snapshotTree(dir);
    const expected = diffSnapshots(before, after);
    expect(expected).toMatchObject({ created: ['0-new.txt'], modified: ['b/c.txt'], deleted: ['a.txt'] });
    // Reversed and shuffled copies: the snapshots given are left as they were.
    const reversed = { ...before, entries: [...before.entries].reverse() };
    const shuffled = {
      ...after,
      entries: [after.entries[2]!, after.entries[0]!, ...after.entries.slice(3), after.entries[1]!],
    };
    const order = shuffled.entries.map((entry) => entry.path);
    expect(diffSnapshots(reversed, shuffled)).toEqual(expected);
    expect(shuffled.entries.map((entry) => entry.path)).toEqual(order);
  });

  it('uses mtime only for unhashed files', async () => {
    write('big', 'aaaa');
    const before = await snapshotTree(dir, { hash: false });
    const touched = new Date(Date.now() + 60_000);
    fs.utimesSync(path.join(dir, 'big'), touched, touched);
    expect(diffSnapshots(before, await snapshotTree(dir, { hash: false })).modified).toEqual(['big']);
    const hashedBefore = await snapshotTree(dir);
    const later = new Date(Date.now() + 120_000);
    fs.utimesSync(path.join(dir, 'big'), later, later);
    expect(diffSnapshots(hashedBefore, await snapshotTree(dir)).modified).toEqual([]);
  });
});

/** Past the racy window of fs-hash-cache.ts (50 ms for sub-second timestamps), so snapshots remember hashes. */
const settle = (): Promise<void> => new Promise((resolve) => setTimeout(resolve, 150));

describe('stat-based change detection', () => {
  it('detects a same-size rewrite whose mtime was put back: the remembered hash is keyed on ctime too', async () => {
    const fixed = new Date('2020-01-02T03:04:05.000Z');
    write('small.txt', 'aaaa');
    write('large.bin', 'a'.repeat(100_000));
    for (const rel of ['small.txt', 'large.bin']) fs.utimesSync(path.join(dir, rel), fixed, fixed);
    await settle();
    const before = await snapshotTree(dir);
    write('small.txt', 'bbbb');
    write('large.bin', `${'a'.repeat(99_999)}b`);
    for (const rel of ['small.txt', 'large.bin']) fs.utimesSync(path.join(dir, rel), fixed, fixed);
    const after = FsSnapshotSchema.parse(await snapshotTree(dir));
    expect(after.entries.map((e) => [e.path, e.size, e.mtime_ms])).toEqual(
      before.entries.map((e) => [e.path, e.size, e.mtime_ms]),
    );
    expect(after.entries.find((e) => e.path === 'small.txt')?.sha256).toBe(sha256('bbbb'));
    expect(diffSnapshots(before, after).modified).toEqual(['large.bin', 'small.txt']);
  });

  it('does not report a file touched or rewritten with the same content as modified (content decides, not mtime)', async () => {
    write('touched.txt', 'same');
    write('rewritten.txt', 'same too');
    write('replaced.txt', 'same three');
    await settle();
    const before = await snapshotTree(dir);
    const later = new Date(Date.now() + 60_000);
    fs.utimesSync(path.join(dir, 'touched.txt'), later, later);
    write('rewritten.txt', 'same too');
    // A new inode with the same bytes (an atomic write: temp file + rename).
    write('replaced.tmp', 'same three');
    fs.renameSync(path.join(dir, 'replaced.tmp'), path.join(dir, 'replaced.txt'));
    const after = await snapshotTree(dir);
    expect(diffSnapshots(before, after)).toMatchObject({ created: [], modified: [], deleted: [] });
    expect(after.entries.find((e) => e.path === 'touched.txt')?.mtime_ms).not.toBe(
      before.entries.find((e) => e.path === 'touched.txt')?.mtime_ms,
    );
  });

  it('snapshots a 10,000-file tree: remembered hashes give the same entries as reading every file', async () => {
    const rel = (i: number): string => `d${String(Math.floor(i / 100)).padStart(3, '0')}/f${i}.txt`;
    for (let i = 0; i < 10_000; i += 1) write(rel(i), `file ${i}\n`);
    await settle();
    const before = FsSnapshotSchema.parse(await snapshotTree(dir));
    expect(before.truncated).toBe(false);
    expect(before.entries).toHaveLength(10_000);
    expect(before.entries.find((e) => e.path === rel(4242))).toMatchObject({
      type: 'file',
      sha256: sha256('file 4242\n'),
    });
    write(rel(1), 'FILE 1\n');
    write(rel(5000), 'longer content\n');
    fs.rmSync(path.join(dir, rel(9999)));
    write('d100/new.txt', 'n');
    const later = new Date(Date.now() + 60_000);
    fs.utimesSync(path.join(dir, rel(7)), later, later);
    const after = FsSnapshotSchema.parse(await snapshotTree(dir));
    expect(diffSnapshots(before, after)).toEqual({
      root: dir,
      created: ['d100/new.txt'],
      modified: [rel(1), rel(5000)],
      deleted: [rel(9999)],
      engine_bookkeeping: [],
    });
    clearHashCache();
    const fresh = await snapshotTree(dir);
    expect(after.entries).toEqual(fresh.entries);
  });

  it('remembers no hash for a file whose timestamps are within the racy window of the stat', () => {
    const now = Date.now();
    const stat = (ageMs: number, wholeSeconds = false): fs.Stats => {
      const at = wholeSeconds ? Math.floor((now - ageMs) / 1000) * 1000 : now - ageMs + 0.123456;
      return { dev: 1, ino: 2, size: 3, mtimeMs: at, ctimeMs: at } as fs.Stats;
    };
    const next: RootHashes = new Map();
    recordHash(next, 'fresh', stat(10), 'h', now);
    recordHash(next, 'settled', stat(500), 'h', now);
    recordHash(next, 'coarse-fresh', stat(1_500, true), 'h', now);
    recordHash(next, 'coarse-settled', stat(5_000, true), 'h', now);
    expect([...next.keys()].sort()).toEqual(['coarse-settled', 'settled']);
  });
});

/**
 * startSnapshot hands out the listing and hashes in the background; these tests change files between the listing
 * and finish(), as an engine does. The background hashing begins only after a turn of the event loop, so a
 * synchronous change right after `await startSnapshot(...)` always lands before it. Files are settled first: a file
 * written within the racy window is read at listing time instead (its own test below).
 */
describe('startSnapshot: the listing now, the hashes in the background', () => {
  const entryOf = (snap: { entries: readonly { path: string; sha256: string | null }[] }, rel: string) =>
    snap.entries.find((e) => e.path === rel);
  const LARGE = 100_000;

  it("keeps sha256 null for files rewritten, touched or deleted before their hash was taken, never the new content's hash", async () => {
    write('rewritten.txt', 'old');
    write('grown.txt', 'old');
    write('touched.txt', 'same');
    write('deleted.txt', 'bye');
    write('large.bin', 'a'.repeat(LARGE));
    write('untouched.txt', 'keep');
    write('untouched.bin', 'b'.repeat(LARGE));
    await settle();
    const started = await startSnapshot(dir);
    write('rewritten.txt', 'new');
    write('grown.txt', 'newer and longer');
    fs.utimesSync(path.join(dir, 'touched.txt'), new Date(Date.now() + 60_000), new Date(Date.now() + 60_000));
    fs.rmSync(path.join(dir, 'deleted.txt'));
    write('large.bin', `${'a'.repeat(LARGE - 1)}b`);
    const before = FsSnapshotSchema.parse(await started.finish());
    expect(before.entries.map((e) => [e.path, e.sha256])).toEqual([
      ['deleted.txt', null],
      ['grown.txt', null],
      ['large.bin', null],
      ['rewritten.txt', null],
      ['touched.txt', null],
      ['untouched.bin', sha256('b'.repeat(LARGE))],
      ['untouched.txt', sha256('keep')],
    ]);
    // The listed sizes and mtimes stay those of the listing.
    expect(before.entries.map((e) => [e.path, e.size, e.mtime_ms])).toEqual(
      started.listed.entries.map((e) => [e.path, e.size, e.mtime_ms]),
    );
  });

  it('gives the listing at once: sha256 null for files no remembered hash covers, and finish() leaves it as it was', async () => {
    write('a.txt', 'a');
    write('sub/b.txt', 'b');
    fs.symlinkSync('a.txt', path.join(dir, 'link'));
    await settle();
    const started = await startSnapshot(dir);
    const listed = structuredClone(started.listed);
    expect(listed.entries.map((e) => [e.path, e.sha256])).toEqual([
      ['a.txt', null],
      ['link', sha256('a.txt')],
      ['sub/b.txt', null],
    ]);
    const before = await started.finish();
    expect(started.listed).toEqual(listed);
    expect(before.entries.map((e) => [e.path, e.sha256])).toEqual([
      ['a.txt', sha256('a')],
      ['link', sha256('a.txt')],
      ['sub/b.txt', sha256('b')],
    ]);
  });

  it('reads a file written within the racy window at listing time: its hash is the listed content, whatever happens after', async () => {
    write('fresh.txt', 'listed');
    // A future mtime keeps the stat racy however slowly this test runs: a later read could not be vouched for.
    const future = new Date(Date.now() + 3_600_000);
    fs.utimesSync(path.join(dir, 'fresh.txt'), future, future);
    const started = await startSnapshot(dir);
    expect(entryOf(started.listed, 'fresh.txt')?.sha256).toBe(sha256('listed'));
    write('fresh.txt', 'later!');
    fs.utimesSync(path.join(dir, 'fresh.txt'), future, future);
    expect(entryOf(await started.finish(), 'fresh.txt')?.sha256).toBe(sha256('listed'));
  });

  it("diffs a finished before-snapshot against the after-snapshot: changes during the engine's run count, untouched files do not", async () => {
    const fixed = new Date('2020-01-02T03:04:05.000Z');
    write('untouched.txt', 'keep');
    write('changed.txt', 'v1');
    write('restored-mtime.txt', 'aaaa');
    write('deleted.txt', 'bye');
    fs.utimesSync(path.join(dir, 'restored-mtime.txt'), fixed, fixed);
    await settle();
    const started = await startSnapshot(dir);
    write('changed.txt', 'v2 longer');
    // Same size, mtime put back: only ctime tells, and it keeps the before hash out.
    write('restored-mtime.txt', 'bbbb');
    fs.utimesSync(path.join(dir, 'restored-mtime.txt'), fixed, fixed);
    fs.rmSync(path.join(dir, 'deleted.txt'));
    write('created.txt', 'new');
    const before = await started.finish();
    const after = await snapshotTree(dir);
    expect(entryOf(after, 'restored-mtime.txt')).toMatchObject({
      size: 4,
      mtime_ms: fixed.getTime(),
      sha256: sha256('bbbb'),
    });
    expect(FsDiffSchema.parse(diffSnapshots(before, after))).toEqual({
      root: dir,
      created: ['created.txt'],
      modified: ['changed.txt', 'restored-mtime.txt'],
      deleted: ['deleted.txt'],
      engine_bookkeeping: [],
    });
  });

  it('past hashLimit reads none of the files it has no hash for; the after-snapshot reads only those whose stat changed', async () => {
    for (let i = 0; i < 30; i += 1) write(`d${i % 3}/f${i}.txt`, `file ${i}`);
    await settle();
    const started = await startSnapshot(dir, { hashLimit: 10 });
    expect(started.listed.entries.every((entry) => entry.sha256 === null)).toBe(true);
    write('d0/f0.txt', 'file 0');
    write('d1/f1.txt', 'changed');
    write('new.txt', 'new');
    const before = await started.finish();
    expect(before.entries.every((entry) => entry.sha256 === null)).toBe(true);
    expect(rememberedHashes(dir).get('d2/f2.txt')).toMatchObject({ sha256: null });
    const after = FsSnapshotSchema.parse(await snapshotTree(dir));
    // Unchanged files stay unread (null); what the engine wrote is read: its content is known now.
    expect(entryOf(after, 'd2/f2.txt')?.sha256).toBeNull();
    expect(entryOf(after, 'd1/f1.txt')?.sha256).toBe(sha256('changed'));
    expect(entryOf(after, 'new.txt')?.sha256).toBe(sha256('new'));
    // A rewrite of the same bytes cannot be told from a change without the before content: reported modified.
    expect(diffSnapshots(before, after)).toMatchObject({
      created: ['new.txt'],
      modified: ['d0/f0.txt', 'd1/f1.txt'],
      deleted: [],
    });
    // Without a limit (the default), and within it, every file is read.
    clearHashCache();
    const unlimited = await (await startSnapshot(dir)).finish();
    expect(unlimited.entries.every((entry) => entry.sha256 !== null)).toBe(true);
    clearHashCache();
    const within = await (await startSnapshot(dir, { hashLimit: 100 })).finish();
    expect(within.entries).toEqual(unlimited.entries);
  });

  it('equals snapshotTree when nothing changes, and remembers the hashes it took for the next snapshot', async () => {
    for (let i = 0; i < 50; i += 1) write(`d${i % 5}/f${i}.txt`, `file ${i}`);
    write('large.bin', 'c'.repeat(LARGE));
    await settle();
    const started = await startSnapshot(dir);
    const before = await started.finish();
    const remembered = rememberedHashes(dir);
    expect(remembered.size).toBe(51);
    expect(remembered.get('large.bin')?.sha256).toBe(sha256('c'.repeat(LARGE)));
    clearHashCache();
    const reference = await snapshotTree(dir);
    expect(before.entries).toEqual(reference.entries);
    expect({ ...before, taken_at: null }).toEqual({ ...reference, taken_at: null });
  });

  it('remembers no hash it could not vouch for, so the after-snapshot reads those files again', async () => {
    write('changed.txt', 'v1');
    write('same.txt', 'same');
    await settle();
    const started = await startSnapshot(dir);
    write('changed.txt', 'v2');
    await started.finish();
    expect([...rememberedHashes(dir).keys()]).toEqual(['same.txt']);
    expect(entryOf(await snapshotTree(dir), 'changed.txt')?.sha256).toBe(sha256('v2'));
  });

  it('finish() is idempotent and cheap once done: the same promise, not a second hashing after later changes', async () => {
    write('a.txt', 'a');
    await settle();
    const started = await startSnapshot(dir);
    const first = started.finish();
    expect(started.finish()).toBe(first);
    const before = await first;
    write('a.txt', 'b');
    expect(await started.finish()).toBe(before);
    expect(entryOf(before, 'a.txt')?.sha256).toBe(sha256('a'));
  });

  it('never rejects when the whole tree is removed before finish()', async () => {
    for (let i = 0; i < 30; i += 1) write(`d${i % 3}/f${i}.txt`, `file ${i}`);
    write('large.bin', 'd'.repeat(LARGE));
    await settle();
    const started = await startSnapshot(dir);
    fs.rmSync(dir, { recursive: true, force: true });
    const before = FsSnapshotSchema.parse(await started.finish());
    expect(before.entries).toHaveLength(31);
    expect(before.entries.every((e) => e.sha256 === null)).toBe(true);
  });

  it("property: a finished before-snapshot holds each file's listed hash or null, and the diff reports exactly what the engine did", async () => {
    type Change = 'none' | 'rewrite-same-size' | 'rewrite-longer' | 'same-content' | 'touch' | 'delete';
    const change = fc.constantFrom<Change>(
      'none',
      'rewrite-same-size',
      'rewrite-longer',
      'same-content',
      'touch',
      'delete',
    );
    const file = fc.record({ large: fc.boolean(), change, seed: fc.string({ minLength: 1, maxLength: 8 }) });
    let round = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(file, { minLength: 1, maxLength: 6 }), async (files) => {
        const root = path.join(dir, `round-${round++}`);
        const content = (i: number, seed: string, large: boolean): string =>
          `${i}:${seed}`.padEnd(large ? LARGE : 32, '.');
        const rel = (i: number): string => `f${i}`;
        files.forEach((f, i) => {
          fs.mkdirSync(root, { recursive: true });
          fs.writeFileSync(path.join(root, rel(i)), content(i, f.seed, f.large));
        });
        await settle();
        const started = await startSnapshot(root);
        files.forEach((f, i) => {
          const abs = path.join(root, rel(i));
          const old = content(i, f.seed, f.large);
          if (f.change === 'rewrite-same-size') fs.writeFileSync(abs, `${old.slice(0, -1)}!`);
          else if (f.change === 'rewrite-longer') fs.writeFileSync(abs, `${old}!`);
          else if (f.change === 'same-content') fs.writeFileSync(abs, old);
          else if (f.change === 'touch')
            fs.utimesSync(abs, new Date(Date.now() + 60_000), new Date(Date.now() + 60_000));
          else if (f.change === 'delete') fs.rmSync(abs);
        });
        const before = FsSnapshotSchema.parse(await started.finish());
        expect(before.entries.map((e) => e.path)).toEqual(files.map((_, i) => rel(i)).sort());
        files.forEach((f, i) => {
          expect(entryOf(before, rel(i))?.sha256).toBe(
            f.change === 'none' ? sha256(content(i, f.seed, f.large)) : null,
          );
        });
        const diff = diffSnapshots(before, await snapshotTree(root));
        const changed = (kinds: readonly Change[]): string[] =>
          files.flatMap((f, i) => (kinds.includes(f.change) ? [rel(i)] : [])).sort();
        expect(diff.created).toEqual([]);
        expect(diff.deleted).toEqual(changed(['delete']));
        // A touch or a same-content rewrite left the before hash unproven: reported, never missed (content or mtime).
        expect(diff.modified).toEqual(changed(['rewrite-same-size', 'rewrite-longer', 'same-content', 'touch']));
      }),
      { numRuns: 12 },
    );
  });
});

describe('under: the path of a listed entry', () => {
  it('is path.join(root, rel) for every root and every relative path the walk gives', () => {
    // Roots as callers pass them: absolute or relative, with trailing separators, `.` and `..` segments, empty.
    const segment = fc.constantFrom('a', 'b.txt', '.hidden', 'x y', 'é', '..', '.', '');
    const root = fc
      .tuple(fc.boolean(), fc.array(segment, { maxLength: 4 }), fc.boolean())
      .map(([absolute, parts, trailing]) => `${absolute ? '/' : ''}${parts.join('/')}${trailing ? '/' : ''}`);
    // What the walk gives: names (never `.`, `..`, empty or with a `/`) joined by `/`.
    const name = fc
      .string({ minLength: 1, maxLength: 6 })
      .filter((n) => n !== '.' && n !== '..' && !n.includes('/') && !n.includes('\0'));
    const rel = fc.array(name, { minLength: 1, maxLength: 4 }).map((names) => names.join('/'));
    fc.assert(
      fc.property(root, rel, (r, p) => under(r)(p) === path.join(r, p)),
      { numRuns: 2000 },
    );
  });

  it('takes the root as given for the snapshot, and only the listed paths by concatenation', async () => {
    write('d/f.txt', 'x');
    const snap = await snapshotTree(`${dir}/./`);
    expect(snap.entries.map((e) => [e.path, e.sha256])).toEqual([['d/f.txt', sha256('x')]]);
  });
});
