/**
 * writeFileAtomic / writeJsonAtomic: a file up to 4 MiB is written with synchronous calls (a durable one fsynced in
 * the thread pool), a larger one through the thread pool; either way the reader sees the whole new content, a missing
 * directory is made, and a write that fails leaves no temporary file behind.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { syncFile, writeFileAtomic, writeFileAtomicSync, writeJsonAtomic } from '../../src/runtime/atomic-write.js';

let dir: string;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ah-atomic-'));
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

/** Everything in `dir` but the given names: temporary siblings left behind. */
const leftovers = (...names: string[]): string[] =>
  fs
    .readdirSync(dir, { recursive: true })
    .map(String)
    .filter((name) => !names.includes(name));

const SIZES = [
  { name: 'a small file (synchronous calls)', bytes: 1_000 },
  { name: 'a 1.2 MB file (synchronous calls)', bytes: 1_200_000 },
  { name: 'a 5 MiB file (the thread pool)', bytes: 5 * 1024 * 1024 },
];

describe.each(SIZES)('writeFileAtomic, $name', ({ bytes }) => {
  it('replaces the file whole, durable or not, and leaves no temporary file', async () => {
    const file = path.join(dir, 'out.bin');
    fs.writeFileSync(file, 'old');
    const data = Buffer.alloc(bytes, 'x');
    await writeFileAtomic(file, data);
    expect(fs.readFileSync(file).equals(data)).toBe(true);
    await writeFileAtomic(file, 'y'.repeat(bytes), { durable: false });
    expect(fs.readFileSync(file, 'utf8')).toBe('y'.repeat(bytes));
    expect(leftovers('out.bin')).toEqual([]);
  });

  it('makes a missing directory', async () => {
    const file = path.join(dir, 'a', 'b', 'out.txt');
    await writeFileAtomic(file, 'z'.repeat(bytes));
    expect(fs.statSync(file).size).toBe(bytes);
  });

  it('fails on a target that is a directory, keeping it and leaving no temporary file', async () => {
    const target = path.join(dir, 'taken');
    fs.mkdirSync(path.join(target, 'inside'), { recursive: true });
    await expect(writeFileAtomic(target, 'q'.repeat(bytes))).rejects.toMatchObject({
      code: expect.stringMatching(/^(EISDIR|ENOTEMPTY|EEXIST)$/),
    });
    expect(fs.statSync(target).isDirectory()).toBe(true);
    expect(leftovers('taken', path.join('taken', 'inside'))).toEqual([]);
  });
});

describe('writeJsonAtomic', () => {
  it('writes indented JSON by default and one line with pretty: false, each with a final newline', async () => {
    const file = path.join(dir, 'value.json');
    const value = { a: [1, 2], b: { c: 'd' } };
    await writeJsonAtomic(file, value);
    expect(fs.readFileSync(file, 'utf8')).toBe(`${JSON.stringify(value, null, 2)}\n`);
    await writeJsonAtomic(file, value, { pretty: false });
    expect(fs.readFileSync(file, 'utf8')).toBe(`${JSON.stringify(value)}\n`);
  });
});

describe('syncFile', () => {
  it('fsyncs a file without changing it; a file gone is nothing to sync; another failure is thrown', async () => {
    const file = path.join(dir, 'run.json');
    writeFileAtomicSync(file, '{"a":1}\n');
    await syncFile(file);
    expect(fs.readFileSync(file, 'utf8')).toBe('{"a":1}\n');
    await expect(syncFile(path.join(dir, 'gone.json'))).resolves.toBeUndefined();
    await expect(syncFile(path.join(file, 'under-a-file'))).rejects.toMatchObject({ code: 'ENOTDIR' });
  });
});
