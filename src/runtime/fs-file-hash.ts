/**
 * sha256 of a file as it was when it was listed: the file is read through one descriptor, and the hash counts only
 * when the descriptor's fstat, before and after the read, shows the same device, inode, size, mtime and ctime as
 * the lstat of the listing (`sameIdentity`). A file renamed over, rewritten, truncated, appended to or touched since
 * gives null instead of the new content's hash; so does one that vanished or cannot be read. Never throws.
 *
 * What the stats cannot prove is a write in the same timestamp tick as the listed mtime/ctime (a racy stat,
 * `fs-hash-cache.ts`): callers read such files at once, never later.
 */
import { createHash } from 'node:crypto';
import fsSync from 'node:fs';
import fs from 'node:fs/promises';
import { sameIdentity, type FileIdentity } from './fs-hash-cache.js';

/**
 * O_NONBLOCK because a path swapped for a FIFO after the listing would otherwise block the read for good; on a
 * regular file it changes nothing (and a FIFO has another inode, so its fstat already disqualifies it).
 */
const OPEN_FLAGS = fsSync.constants.O_RDONLY | fsSync.constants.O_NONBLOCK;
/** Bytes read at a time from a large file. */
const CHUNK_BYTES = 1024 * 1024;

/**
 * sha256 (hex) of the small file `abs` in one synchronous read, or null when it is no longer the file `listed`
 * describes (or is gone, or unreadable). Synchronous: for a small file a read costs less than a trip through
 * libuv's thread pool.
 */
export function hashSmallFileIfUnchanged(abs: string, listed: FileIdentity): string | null {
  let fd: number;
  try {
    fd = fsSync.openSync(abs, OPEN_FLAGS);
  } catch {
    return null;
  }
  try {
    if (!sameIdentity(fsSync.fstatSync(fd), listed)) return null;
    const sha256 = createHash('sha256').update(fsSync.readFileSync(fd)).digest('hex');
    return sameIdentity(fsSync.fstatSync(fd), listed) ? sha256 : null;
  } catch {
    return null;
  } finally {
    fsSync.closeSync(fd);
  }
}

/** Like {@link hashSmallFileIfUnchanged}, for a large file: read asynchronously, `CHUNK_BYTES` at a time. */
export async function hashLargeFileIfUnchanged(abs: string, listed: FileIdentity): Promise<string | null> {
  let handle: fs.FileHandle;
  try {
    handle = await fs.open(abs, OPEN_FLAGS);
  } catch {
    return null;
  }
  try {
    if (!sameIdentity(await handle.stat(), listed)) return null;
    const hash = createHash('sha256');
    const buffer = Buffer.allocUnsafe(CHUNK_BYTES);
    for (
      let read = await handle.read(buffer, 0, CHUNK_BYTES, null);
      read.bytesRead > 0;
      read = await handle.read(buffer, 0, CHUNK_BYTES, null)
    ) {
      hash.update(buffer.subarray(0, read.bytesRead));
    }
    return sameIdentity(await handle.stat(), listed) ? hash.digest('hex') : null;
  } catch {
    return null;
  } finally {
    await handle.close().catch(() => undefined);
  }
}
