import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FsDiffSchema, FsSnapshotSchema } from '../../src/protocol/index.js';
import { diffSnapshots, snapshotTree } from '../../src/runtime/fs-snapshot.js';

let dir: string;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ah-snap-'));
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

describe('fs snapshot and diff', () => {
  it('lists files, dot files and symlinks (not followed), excludes .audit, and diffs created/modified/deleted', async () => {
    fs.mkdirSync(path.join(dir, '.audit'));
    fs.writeFileSync(path.join(dir, '.audit', 'meta.1.json'), '{}');
    fs.writeFileSync(path.join(dir, 'keep.txt'), 'same');
    fs.writeFileSync(path.join(dir, 'change.txt'), 'v1');
    fs.writeFileSync(path.join(dir, '.hidden'), 'h');
    fs.mkdirSync(path.join(dir, 'sub', 'deep'), { recursive: true });
    fs.writeFileSync(path.join(dir, 'sub', 'deep', 'gone.txt'), 'bye');
    fs.symlinkSync('/etc', path.join(dir, 'etc-link'));
    const before = FsSnapshotSchema.parse(await snapshotTree(dir));
    expect(before.entries.map((e) => `${e.path}:${e.type}`)).toEqual(['.hidden:file', 'change.txt:file', 'etc-link:symlink', 'keep.txt:file', 'sub/deep/gone.txt:file']);
    fs.writeFileSync(path.join(dir, 'change.txt'), 'v2');
    fs.rmSync(path.join(dir, 'sub', 'deep', 'gone.txt'));
    fs.writeFileSync(path.join(dir, 'new.txt'), 'n');
    fs.writeFileSync(path.join(dir, '.audit', 'meta.2.json'), '{}');
    const diff = FsDiffSchema.parse(diffSnapshots(before, await snapshotTree(dir)));
    expect(diff).toEqual({ root: dir, created: ['new.txt'], modified: ['change.txt'], deleted: ['sub/deep/gone.txt'] });
  });

  it('marks a snapshot truncated past maxFiles and skips hashing large files', async () => {
    for (let i = 0; i < 5; i += 1) fs.writeFileSync(path.join(dir, `f${i}`), 'x'.repeat(i * 10));
    const snap = await snapshotTree(dir, { maxFiles: 3, maxHashBytes: 15 });
    expect(snap.truncated).toBe(true);
    expect(snap.entries).toHaveLength(3);
    expect(snap.entries.find((e) => e.path === 'f2')?.sha256).toBeNull();
    expect(snap.entries.find((e) => e.path === 'f1')?.sha256).toMatch(/^[0-9a-f]{64}$/);
  });

  it('returns an empty snapshot for a missing root and survives files vanishing mid-walk', async () => {
    expect((await snapshotTree(path.join(dir, 'missing'))).entries).toEqual([]);
    for (let i = 0; i < 200; i += 1) fs.writeFileSync(path.join(dir, `v${i}`), 'x');
    const pending = snapshotTree(dir);
    for (let i = 0; i < 200; i += 2) fs.rmSync(path.join(dir, `v${i}`), { force: true });
    const snap = await pending;
    expect(snap.entries.length).toBeGreaterThanOrEqual(100);
    expect(snap.entries.length).toBeLessThanOrEqual(200);
  });
});
