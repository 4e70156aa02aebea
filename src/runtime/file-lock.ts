/**
 * Inter-process locking around read-modify-write of shared files (the run index, engine config files),
 * via proper-lockfile (mkdir-based, stale locks recovered).
 *
 * Callers in one process (a Vitest worker runs many attempts at once) queue in memory, one promise chain per
 * resolved path, so only one of them at a time competes for the file lock: proper-lockfile would make the others
 * sleep-poll it (20 ms and more per retry), while the queue starts the next the moment the previous releases.
 *
 * A free lock is taken and given back with synchronous calls (proper-lockfile's `lockSync`: a mkdir and a stat; the
 * release a rmdir), the same lock directory as the asynchronous path, which only a lock held by another process
 * takes (retrying). Each trip through libuv's thread pool waits for the event loop's next turn: with 16 attempts
 * starting in one process, the six trips of taking and giving back the run index's lock cost ~50 ms each, and the
 * attempts queued behind it waited their sum (issue 29).
 */
import fs, { constants as fsConstants } from 'node:fs';
import path from 'node:path';
import lockfile from 'proper-lockfile';

/** A lock whose directory is older than this is taken over (its holder died). */
const STALE_MS = 15_000;

/** Takes the lock of `file` at once when it is free; null when another process holds it. */
function lockNow(file: string): (() => void) | null {
  try {
    return lockfile.lockSync(file, { realpath: false, stale: STALE_MS });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ELOCKED') return null;
    throw error;
  }
}

/**
 * Waits for the lock of `file`, held by another process, up to ~30 s (retries, 20–100 ms apart); given back
 * synchronously too, so the next caller of this process finds it free.
 */
async function lockLater(file: string): Promise<() => void> {
  await lockfile.lock(file, {
    realpath: false,
    stale: STALE_MS,
    retries: { retries: 300, minTimeout: 20, maxTimeout: 100, factor: 1.2 },
  });
  return () => lockfile.unlockSync(file, { realpath: false });
}

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
    fs.mkdirSync(path.dirname(file), { recursive: true });
    // proper-lockfile retries every failed mkdir of the lock, not only a held lock (EEXIST): on a read-only or
    // unwritable directory that is ~30 s of retries before the EROFS/EACCES. Fail at once instead.
    fs.accessSync(path.dirname(file), fsConstants.W_OK);
    const release = lockNow(file) ?? (await lockLater(file));
    try {
      return await fn();
    } finally {
      try {
        release();
      } catch {
        // Already given back (compromised, or removed by hand): nothing left to release.
      }
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

/**
 * Takes the lock of `file` at once, or returns null when another holder (this process or another) has it: for a
 * lock whose second taker is refused rather than queued. The lock is kept fresh while held and given up by the
 * returned function (safe to call twice). A lock directory removed behind its holder (by hand, or by an agent that
 * can write there) is given up quietly, never thrown in a timer.
 */
export function tryFileLock(file: string): (() => void) | null {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  let release: () => void;
  try {
    release = lockfile.lockSync(file, { realpath: false, stale: STALE_MS, onCompromised: () => undefined });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ELOCKED') return null;
    throw error;
  }
  let released = false;
  return () => {
    if (released) return;
    released = true;
    try {
      release();
    } catch {
      // Already given back (compromised, or removed by hand): nothing left to release.
    }
  };
}
