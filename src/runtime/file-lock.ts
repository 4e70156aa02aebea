/**
 * Inter-process locking around read-modify-write of shared files (the run index, engine config files),
 * via proper-lockfile (mkdir-based, stale locks recovered).
 *
 * Callers in one process (a Vitest worker runs many attempts at once) queue in memory, one promise chain per
 * resolved path, so only one of them at a time competes for the file lock: proper-lockfile would make the others
 * sleep-poll it (20 ms and more per retry), while the queue starts the next the moment the previous releases.
 */
import { constants as fsConstants } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import lockfile from 'proper-lockfile';

/** Per resolved path: settles when the last queued caller in this process has released the lock. */
const queues = new Map<string, Promise<void>>();

/** Waits for this process's earlier callers of `key`; the returned function lets the next one in. */
async function queueInProcess(key: string): Promise<() => void> {
  const previous = queues.get(key) ?? Promise.resolve();
  let leave!: () => void;
  const done = new Promise<void>((resolve) => {
    leave = resolve;
  });
  const tail = previous.then(() => done);
  queues.set(key, tail);
  await previous;
  return () => {
    leave();
    if (queues.get(key) === tail) queues.delete(key);
  };
}

/**
 * Runs `fn` while holding the lock of `file` (the file need not exist). Waits up to ~30 s for the lock of another
 * process; callers in this process are served in call order.
 */
export async function withFileLock<T>(file: string, fn: () => Promise<T>): Promise<T> {
  const leave = await queueInProcess(path.resolve(file));
  try {
    await fs.mkdir(path.dirname(file), { recursive: true });
    // proper-lockfile retries every failed mkdir of the lock, not only a held lock (EEXIST): on a read-only or
    // unwritable directory that is ~30 s of retries before the EROFS/EACCES. Fail at once instead.
    await fs.access(path.dirname(file), fsConstants.W_OK);
    const release = await lockfile.lock(file, {
      realpath: false,
      stale: 15_000,
      retries: { retries: 300, minTimeout: 20, maxTimeout: 100, factor: 1.2 },
    });
    try {
      return await fn();
    } finally {
      await release().catch(() => undefined);
    }
  } finally {
    leave();
  }
}

/**
 * Takes the lock of `file` (as {@link withFileLock}) and holds it until the returned function is called: for a lock
 * that spans steps of an attempt rather than one call. The release is safe to call twice.
 */
export function holdFileLock(file: string): Promise<() => void> {
  return new Promise((acquired, failed) => {
    let release!: () => void;
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    withFileLock(file, async () => {
      acquired(release);
      await held;
    }).catch(failed);
  });
}
