/**
 * Crash-safe file writes: write to a temporary sibling, fsync, rename over the target. A reader sees the old
 * content or the new one, never half of it.
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';

/** Options of {@link writeFileAtomic}. */
export interface AtomicWriteOptions {
  /**
   * fsync before the rename (default true), so the new content survives a power cut too, not only a crash of
   * this process. False for caches that are rebuilt from the truth when unreadable (the run index).
   */
  durable?: boolean;
}

/** Writes `data` to `file` atomically (same directory temp file + rename). */
export async function writeFileAtomic(file: string, data: string | Uint8Array, options: AtomicWriteOptions = {}): Promise<void> {
  await fs.mkdir(path.dirname(file), { recursive: true });
  const tmp = path.join(path.dirname(file), `.${path.basename(file)}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`);
  const handle = await fs.open(tmp, 'w');
  try {
    try {
      await handle.writeFile(data);
      if (options.durable !== false) await handle.sync();
    } finally {
      await handle.close();
    }
    await fs.rename(tmp, file);
  } catch (error) {
    // A full disk must not leave a half-written temp file behind (nor take the space of one).
    await fs.rm(tmp, { force: true });
    throw error;
  }
}

/** Writes `value` as pretty JSON (with a trailing newline) atomically. */
export async function writeJsonAtomic(file: string, value: unknown, options: AtomicWriteOptions = {}): Promise<void> {
  await writeFileAtomic(file, `${JSON.stringify(value, null, 2)}\n`, options);
}
