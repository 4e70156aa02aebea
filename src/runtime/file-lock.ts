/**
 * Inter-process locking around read-modify-write of shared files (the run index, engine config files),
 * via proper-lockfile (mkdir-based, stale locks recovered).
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import lockfile from 'proper-lockfile';

/** Runs `fn` while holding the lock of `file` (the file need not exist). Waits up to ~30 s for the lock. */
export async function withFileLock<T>(file: string, fn: () => Promise<T>): Promise<T> {
  await fs.mkdir(path.dirname(file), { recursive: true });
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
}
