/**
 * withFileLock within one process: callers of one path are served one at a time in call order (they queue in
 * memory instead of sleep-polling the lock file), a failing caller lets the next one in, and other paths do not wait.
 * Across processes: a free lock is taken at once with synchronous calls, one another process holds is waited for
 * (the retrying path), and a stale one (its holder died) is taken over.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { holdFileLock, withFileLock } from '../../src/runtime/file-lock.js';
import { scaled } from '../helpers/load-scaled.js';

let dir: string;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ah-lock-'));
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

const tick = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe('withFileLock in one process', () => {
  it('serves concurrent callers of one path one at a time, in call order', async () => {
    const file = path.join(dir, 'shared.json');
    const events: string[] = [];
    let inside = 0;
    await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        withFileLock(file, async () => {
          inside += 1;
          expect(inside).toBe(1);
          events.push(`in ${i}`);
          await tick();
          events.push(`out ${i}`);
          inside -= 1;
        }),
      ),
    );
    expect(events).toEqual(Array.from({ length: 12 }, (_, i) => [`in ${i}`, `out ${i}`]).flat());
    expect(fs.existsSync(`${file}.lock`)).toBe(false);
  });

  it('a caller that throws releases the lock to the next one', async () => {
    const file = path.join(dir, 'shared.json');
    const failing = withFileLock(file, async () => {
      throw new Error('boom');
    });
    const next = withFileLock(file, async () => 'next ran');
    await expect(failing).rejects.toThrow('boom');
    await expect(next).resolves.toBe('next ran');
  });

  it('another path does not wait for a held lock', async () => {
    let releaseA!: () => void;
    const heldA = new Promise<void>((resolve) => {
      releaseA = resolve;
    });
    const a = withFileLock(path.join(dir, 'a.json'), () => heldA);
    await expect(withFileLock(path.join(dir, 'b.json'), async () => 'b ran')).resolves.toBe('b ran');
    releaseA();
    await a;
  });
});

describe('holdFileLock', () => {
  it('holds the lock across steps: the next holder gets it only once the first releases it', async () => {
    const file = path.join(dir, 'held');
    const order: string[] = [];
    const releaseFirst = await holdFileLock(file);
    order.push('first holds');
    const second = holdFileLock(file).then((release) => {
      order.push('second holds');
      return release;
    });
    // The second waits while the first holds: a caller of the same lock queues behind both.
    await withFileLock(path.join(dir, 'other'), async () => undefined);
    expect(order).toEqual(['first holds']);
    releaseFirst();
    releaseFirst();
    const releaseSecond = await second;
    expect(order).toEqual(['first holds', 'second holds']);
    releaseSecond();
    await withFileLock(file, async () => order.push('then a plain caller'));
    expect(order.at(-1)).toBe('then a plain caller');
  });
});

/** A process that takes the lock of `file` with proper-lockfile, says `held`, and on a line of stdin writes `marker`, then releases it. */
const HOLDER = `
const lockfile = require(process.argv[1]);
const fs = require('node:fs');
const [file, marker] = process.argv.slice(2);
const release = lockfile.lockSync(file, { realpath: false, stale: 15000 });
process.stdout.write('held\\n');
process.stdin.once('data', () => {
  fs.writeFileSync(marker, 'released by the other process');
  release();
  process.exit(0);
});
`;

describe('withFileLock across processes', () => {
  it(
    'waits for a lock another process holds and runs only once that process has released it',
    async () => {
      const file = path.join(dir, 'index.jsonl');
      const marker = path.join(dir, 'released');
      const lockfilePath = createRequire(import.meta.url).resolve('proper-lockfile');
      const holder = spawn(process.execPath, ['-e', HOLDER, lockfilePath, file, marker], {
        stdio: ['pipe', 'pipe', 'inherit'],
      });
      const exited = new Promise((resolve) => holder.on('exit', resolve));
      await new Promise<void>((resolve) => holder.stdout.once('data', () => resolve()));
      expect(fs.existsSync(`${file}.lock`)).toBe(true);
      let ran = false;
      const waiting = withFileLock(file, async () => {
        ran = true;
        return fs.existsSync(marker);
      });
      await tick();
      expect(ran).toBe(false);
      holder.stdin.write('release\n');
      await expect(waiting).resolves.toBe(true);
      await exited;
      expect(fs.existsSync(`${file}.lock`)).toBe(false);
    },
    scaled(60_000),
  );

  it('takes over a stale lock left by a holder that died', async () => {
    const file = path.join(dir, 'index.jsonl');
    fs.mkdirSync(`${file}.lock`);
    const old = new Date(Date.now() - 60_000);
    fs.utimesSync(`${file}.lock`, old, old);
    await expect(withFileLock(file, async () => 'ran')).resolves.toBe('ran');
    expect(fs.existsSync(`${file}.lock`)).toBe(false);
  });
});
