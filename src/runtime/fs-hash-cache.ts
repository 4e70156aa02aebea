/**
 * Content hashes remembered between snapshots of the same root, so the after-snapshot of an attempt (and the
 * before-snapshot of the next one in the same process) reads only the files whose metadata changed.
 *
 * A hash is reused only when the file's inode, size, mtime and ctime are all unchanged. ctime cannot be set from
 * user space (utimes sets it to now), so an in-place rewrite of the same size with the mtime restored still
 * misses the cache. What a stat cannot tell apart is a write in the same timestamp tick as the read that produced
 * the hash (git's "racily clean" entries): a file whose mtime or ctime is that close to the stat is hashed, but its
 * hash is not remembered, so the next snapshot reads it again.
 *
 * The blind spot left: a change that keeps inode, size, mtime and ctime all as they were, which takes the system
 * clock set back, or a filesystem that keeps no ctime. Git's index has the same one.
 */
import type { Stats } from 'node:fs';
import path from 'node:path';

/** How close (ms) to the stat a fine-grained timestamp is racy: above Linux's coarse clock tick (1–10 ms). */
const RACY_MS = 50;
/** The same for filesystems with whole-second timestamps (ext3, HFS+; FAT has 2 s). */
const RACY_COARSE_MS = 2_500;
/** Roots remembered at a time; each holds at most one snapshot's files (its `maxFiles`). */
const MAX_ROOTS = 8;

/** The parts of a stat that say a file is still the one (and holds the bytes) it was: device, inode, size, mtime, ctime. */
export type FileIdentity = Pick<Stats, 'dev' | 'ino' | 'size' | 'mtimeMs' | 'ctimeMs'>;

/**
 * A remembered hash: the stat it was taken under, and the sha256; or null for a file listed and left unread on
 * purpose (a before-snapshot past its hash limit): unchanged, it stays unread in the snapshots that follow.
 */
export interface RememberedHash extends FileIdentity {
  sha256: string | null;
}

/** The hashes of one root, as its last snapshot saw them: relative path → remembered hash. */
export type RootHashes = Map<string, RememberedHash>;

const roots = new Map<string, RootHashes>();

/** The hashes last remembered for `root` (empty if none). */
export function rememberedHashes(root: string): RootHashes {
  return roots.get(path.resolve(root)) ?? new Map();
}

/** True when `a` and `b` are the same file with the same device, inode, size, mtime and ctime. */
export function sameIdentity(a: FileIdentity, b: FileIdentity): boolean {
  return a.ino === b.ino && a.size === b.size && a.mtimeMs === b.mtimeMs && a.ctimeMs === b.ctimeMs && a.dev === b.dev;
}

/** The remembered hash of `rel` if its stat is unchanged since, else undefined. */
export function cachedHash(hashes: RootHashes, rel: string, stat: FileIdentity): RememberedHash | undefined {
  // A root this process has not snapshotted yet (every before-snapshot of a CLI attempt): no key to hash.
  if (hashes.size === 0) return undefined;
  const hit = hashes.get(rel);
  return hit && sameIdentity(hit, stat) ? hit : undefined;
}

/**
 * True when `stat`'s mtime or ctime is so close to `statAt` (Date.now() before the stat) that a write in the same
 * timestamp tick would leave the stat as it is: then the stat cannot vouch for the content.
 */
export function isRacy(stat: FileIdentity, statAt: number): boolean {
  const coarse = stat.mtimeMs % 1000 === 0 && stat.ctimeMs % 1000 === 0;
  return statAt - Math.max(stat.mtimeMs, stat.ctimeMs) <= (coarse ? RACY_COARSE_MS : RACY_MS);
}

/** Records `sha256` of `rel` in `next` unless its stat is racy at `statAt` (Date.now() before the stat). */
export function recordHash(
  next: RootHashes,
  rel: string,
  stat: FileIdentity,
  sha256: string | null,
  statAt: number,
): void {
  if (isRacy(stat, statAt)) return;
  next.set(rel, {
    dev: stat.dev,
    ino: stat.ino,
    size: stat.size,
    mtimeMs: stat.mtimeMs,
    ctimeMs: stat.ctimeMs,
    sha256,
  });
}

/** Replaces what is remembered for `root` by the hashes of its latest snapshot. */
export function storeHashes(root: string, hashes: RootHashes): void {
  const key = path.resolve(root);
  roots.delete(key);
  roots.set(key, hashes);
  while (roots.size > MAX_ROOTS) roots.delete(roots.keys().next().value!);
}

/** Forgets every remembered hash: the next snapshot reads every file, as in a fresh process (benchmarks, tests). */
export function clearHashCache(): void {
  roots.clear();
}
