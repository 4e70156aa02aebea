/**
 * withFileLock within one process: callers of one path are served one at a time in call order (they queue in
 * memory instead of sleep-polling the lock file), a failing caller lets the next one in, and other paths do not wait.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { holdFileLock, withFileLock } from '../../src/runtime/file-lock.js';

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
