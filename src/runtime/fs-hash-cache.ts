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

/** A remembered hash: the stat it was taken under (device, inode, size, mtime, ctime), and the sha256. */
export interface RememberedHash {
  dev: number;
  ino: number;
  size: number;
  mtimeMs: number;
  ctimeMs: number;
  sha256: string;
}

/** The hashes of one root, as its last snapshot saw them: relative path → remembered hash. */
export type RootHashes = Map<string, RememberedHash>;

const roots = new Map<string, RootHashes>();

/** The hashes last remembered for `root` (empty if none). */
export function rememberedHashes(root: string): RootHashes {
  return roots.get(path.resolve(root)) ?? new Map();
}

/** The remembered hash of `rel` if its stat is unchanged since, else undefined. */
export function cachedHash(hashes: RootHashes, rel: string, stat: Stats): RememberedHash | undefined {
  const hit = hashes.get(rel);
  if (!hit || hit.ino !== stat.ino || hit.size !== stat.size || hit.mtimeMs !== stat.mtimeMs || hit.ctimeMs !== stat.ctimeMs || hit.dev !== stat.dev) return undefined;
  return hit;
}

/** Records `sha256` of `rel` in `next` unless its timestamps are too close to `statAt` (Date.now() before the stat). */
export function recordHash(next: RootHashes, rel: string, stat: Stats, sha256: string, statAt: number): void {
  const coarse = stat.mtimeMs % 1000 === 0 && stat.ctimeMs % 1000 === 0;
  if (statAt - Math.max(stat.mtimeMs, stat.ctimeMs) <= (coarse ? RACY_COARSE_MS : RACY_MS)) return;
  next.set(rel, { dev: stat.dev, ino: stat.ino, size: stat.size, mtimeMs: stat.mtimeMs, ctimeMs: stat.ctimeMs, sha256 });
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
