/**
 * Crash-safe file writes: write to a temporary sibling, fsync, rename over the target. A reader sees the old
 * content or the new one, never half of it.
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';

/** Writes `data` to `file` atomically (same directory temp file + rename). */
export async function writeFileAtomic(file: string, data: string | Uint8Array): Promise<void> {
  await fs.mkdir(path.dirname(file), { recursive: true });
  const tmp = path.join(path.dirname(file), `.${path.basename(file)}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`);
  const handle = await fs.open(tmp, 'w');
  try {
    try {
      await handle.writeFile(data);
      await handle.sync();
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
export async function writeJsonAtomic(file: string, value: unknown): Promise<void> {
  await writeFileAtomic(file, `${JSON.stringify(value, null, 2)}\n`);
}
