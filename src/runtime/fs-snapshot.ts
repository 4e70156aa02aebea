/**
 * Snapshot and diff of a run directory (`fs-before.N.json`, `fs-after.N.json`, `fs-diff.N.json`).
 *
 * A readdir walk rather than tinyglobby: with `followSymbolicLinks: false` tinyglobby (0.2.17) passes
 * `excludeSymlinks: true` to fdir, so symlinks would vanish from the snapshot instead of being recorded. The
 * walk includes dot files, never follows symlinks, never descends into excluded top-level entries, and skips
 * sockets, FIFOs and devices (reading a FIFO would block). Files that vanish between listing and hashing are
 * left out.
 *
 * Issue 13: an attempt snapshots the run directory before and after, and 10,000 small files used to add ~2.4 s
 * (every file read twice through streams). Now each file is lstat'ed, and read only when its stat differs from the
 * previous snapshot of the root in this process (`fs-hash-cache.ts`); the JSON written is unchanged.
 */
import { createHash } from 'node:crypto';
import fsSync, { createReadStream, type Dirent, type Stats } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import type { FsDiff, FsEntry, FsSnapshot } from '../protocol/index.js';
import { cachedHash, rememberedHashes, recordHash, storeHashes, type RootHashes } from './fs-hash-cache.js';

export { clearHashCache } from './fs-hash-cache.js';

/** Options of {@link snapshotTree}. */
export interface SnapshotOptions {
  /**
   * Top-level entry names or globs (`*`, `?`) to leave out (default `['.audit', '.git']`: the audit itself, and git's
   * internals, which engines touch on their own — opencode caches its project id in `.git/opencode` — and whose
   * meaning the audit's `git-diff.N.patch` records instead).
   */
  exclude?: readonly string[];
  /** At most this many files (default 20000); past it the snapshot is marked truncated. */
  maxFiles?: number;
  /** Hash file contents with sha256 (default true); false records `sha256: null` for files. */
  hash?: boolean;
  /** Hash files up to this size (default 8 MiB); larger ones get `sha256: null`. */
  maxHashBytes?: number;
}

/** Files larger than this are hashed as streams, `HASH_CONCURRENCY` at a time; smaller ones in one read. */
const SMALL_FILE_BYTES = 64 * 1024;
/** Large files hashed at the same time. */
const HASH_CONCURRENCY = 8;
/** Longest run (ms) of synchronous file-system calls before the event loop gets a turn. */
const SLICE_MS = 4;

/** Plain code-unit order, the same on every platform and locale. */
function byPath(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** A matcher for top-level names: `*` is any run of characters, `?` one character, the rest literal. */
function compileExclude(patterns: readonly string[]): (name: string) => boolean {
  const regexps = patterns.map((pattern) => {
    const body = pattern.replace(/\/+$/, '').split('').map((ch) => (ch === '*' ? '.*' : ch === '?' ? '.' : ch.replace(/[\\^$.|+()[\]{}]/g, '\\$&'))).join('');
    return new RegExp(`^${body}$`, 's');
  });
  return (name) => regexps.some((regexp) => regexp.test(name));
}

/** Cuts synchronous work into slices: `due()` once `SLICE_MS` have run since the last `pause()`. */
interface Slicer {
  due(): boolean;
  pause(): Promise<void>;
}

/**
 * Gives the event loop a turn once `SLICE_MS` of synchronous calls have run. The walk, the stats and the reads
 * of small files are synchronous, in short slices, because on a small file each call costs less than the trip
 * through libuv's thread pool: on a 2-CPU Linux VM 10,000 lstats took ~20 ms synchronously against 50–120 ms as
 * 32 concurrent promises, and 10,000 reads + sha256 ~60 ms against ~450 ms with `fs.promises.readFile`.
 */
function createSlicer(): Slicer {
  let sliceStart = performance.now();
  return {
    due: () => performance.now() - sliceStart >= SLICE_MS,
    pause: async () => {
      await new Promise((resolve) => setImmediate(resolve));
      sliceStart = performance.now();
    },
  };
}

/**
 * Relative POSIX paths of the files and symlinks under `root`, in walk order (names sorted per directory),
 * stopping once more than `limit` were found. A directory that vanishes or cannot be read is skipped.
 */
async function listTree(root: string, isExcluded: (name: string) => boolean, limit: number, slicer: Slicer): Promise<string[]> {
  const found: string[] = [];
  const walk = async (rel: string): Promise<void> => {
    let entries: Dirent[];
    try {
      entries = fsSync.readdirSync(rel === '' ? root : path.join(root, rel), { withFileTypes: true });
    } catch {
      return;
    }
    if (slicer.due()) await slicer.pause();
    entries.sort((a, b) => byPath(a.name, b.name));
    for (const entry of entries) {
      if (found.length > limit) return;
      if (rel === '' && isExcluded(entry.name)) continue;
      const child = rel === '' ? entry.name : `${rel}/${entry.name}`;
      if (entry.isDirectory()) await walk(child);
      else if (entry.isFile() || entry.isSymbolicLink()) found.push(child);
    }
  };
  await walk('');
  return found;
}

/** sha256 of a file's contents, hex. */
async function hashFile(file: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(file)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

/** True for the errors of a path that is gone (or whose parent became a file) by now. */
function isVanished(error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException | null)?.code;
  return code === 'ENOENT' || code === 'ENOTDIR';
}

/**
 * The entry of one listed path under `root`, or null when it vanished or is no longer a file or symlink.
 * A file that exists but cannot be read is kept with `sha256: null`. It always reads the file (no remembered hash).
 */
export async function describeEntry(root: string, rel: string, options: Pick<SnapshotOptions, 'hash' | 'maxHashBytes'> = {}): Promise<FsEntry | null> {
  const abs = path.join(root, rel);
  try {
    const stat = await fs.lstat(abs);
    if (stat.isSymbolicLink()) {
      const target = await fs.readlink(abs);
      return { path: rel, type: 'symlink', size: stat.size, sha256: createHash('sha256').update(target).digest('hex'), mtime_ms: stat.mtimeMs };
    }
    if (!stat.isFile()) return null;
    let sha256: string | null = null;
    if ((options.hash ?? true) && stat.size <= (options.maxHashBytes ?? 8 * 1024 * 1024)) {
      try {
        sha256 = await hashFile(abs);
      } catch (error) {
        if (isVanished(error)) return null;
      }
    }
    return { path: rel, type: 'file', size: stat.size, sha256, mtime_ms: stat.mtimeMs };
  } catch (error) {
    if (isVanished(error)) return null;
    throw error;
  }
}

/** What a snapshot hashes with: the option values, the hashes remembered for the root, and those it records. */
interface Hashing {
  on: boolean;
  maxBytes: number;
  remembered: RootHashes;
  next: RootHashes;
}

/** A file over `SMALL_FILE_BYTES` whose hash is still to be taken, with the stat it was listed with. */
interface PendingHash {
  entry: FsEntry;
  stat: Stats;
  statAt: number;
}

/**
 * The entry of `rel` from a synchronous lstat, its hash reused when the stat is unchanged since the root's last
 * snapshot, or read at once for a small file; a large file that needs hashing goes to `large`. Null when it
 * vanished, cannot be stat'ed, or is no longer a file or symlink.
 */
function statEntry(root: string, rel: string, hashing: Hashing, large: PendingHash[]): FsEntry | null {
  const abs = path.join(root, rel);
  const statAt = Date.now();
  let stat: Stats | undefined;
  try {
    stat = fsSync.lstatSync(abs, { throwIfNoEntry: false });
    if (!stat) return null;
    if (stat.isSymbolicLink()) {
      const target = fsSync.readlinkSync(abs);
      return { path: rel, type: 'symlink', size: stat.size, sha256: createHash('sha256').update(target).digest('hex'), mtime_ms: stat.mtimeMs };
    }
  } catch {
    return null;
  }
  if (!stat.isFile()) return null;
  const entry: FsEntry = { path: rel, type: 'file', size: stat.size, sha256: null, mtime_ms: stat.mtimeMs };
  if (!hashing.on || stat.size > hashing.maxBytes) return entry;
  const cached = cachedHash(hashing.remembered, rel, stat);
  if (cached !== undefined) {
    entry.sha256 = cached.sha256;
    hashing.next.set(rel, cached);
  } else if (stat.size > SMALL_FILE_BYTES) {
    large.push({ entry, stat, statAt });
  } else {
    let read: { stat: Stats; sha256: string } | null;
    try {
      read = hashSmallFile(abs);
    } catch (error) {
      return isVanished(error) ? null : entry;
    }
    if (!read) return null;
    entry.sha256 = read.sha256;
    recordHash(hashing.next, rel, read.stat, read.sha256, statAt);
  }
  return entry;
}

/**
 * sha256 of a small file in one synchronous read, with the fstat of the descriptor read (the stat its hash is
 * remembered under), or null when the path is no longer a regular file. O_NONBLOCK because a path swapped for a
 * FIFO after the lstat would otherwise block the event loop for good; on a regular file it changes nothing.
 */
function hashSmallFile(abs: string): { stat: Stats; sha256: string } | null {
  const fd = fsSync.openSync(abs, fsSync.constants.O_RDONLY | fsSync.constants.O_NONBLOCK);
  try {
    const stat = fsSync.fstatSync(fd);
    if (!stat.isFile()) return null;
    return { stat, sha256: createHash('sha256').update(fsSync.readFileSync(fd)).digest('hex') };
  } finally {
    fsSync.closeSync(fd);
  }
}

/** Hashes the large files, `HASH_CONCURRENCY` at a time; returns the entries that vanished meanwhile. */
async function hashLarge(root: string, large: readonly PendingHash[], hashing: Hashing): Promise<Set<FsEntry>> {
  const vanished = new Set<FsEntry>();
  let next = 0;
  const worker = async (): Promise<void> => {
    for (let job = large[next++]; job !== undefined; job = large[next++]) {
      try {
        job.entry.sha256 = await hashFile(path.join(root, job.entry.path));
        recordHash(hashing.next, job.entry.path, job.stat, job.entry.sha256, job.statAt);
      } catch (error) {
        if (isVanished(error)) vanished.add(job.entry);
      }
    }
  };
  await Promise.all(Array.from({ length: HASH_CONCURRENCY }, worker));
  return vanished;
}

/**
 * Takes a snapshot of `root` (a missing root gives no entries). Never throws for files that disappear while
 * it runs; entries are sorted by path.
 *
 * Change detection is stat-based: a file whose inode, size, mtime and ctime are those it had in the previous
 * snapshot of the same root in this process keeps the hash taken then, unread; only new or changed files are
 * read (`fs-hash-cache.ts` has the rule, the racy case and the blind spot). With `hash: false` nothing is read or remembered.
 */
export async function snapshotTree(root: string, options: SnapshotOptions = {}): Promise<FsSnapshot> {
  const exclude = [...(options.exclude ?? ['.audit', '.git'])];
  const maxFiles = options.maxFiles ?? 20_000;
  const slicer = createSlicer();
  const listed = await listTree(root, compileExclude(exclude), maxFiles, slicer);
  const truncated = listed.length > maxFiles;
  const hashing: Hashing = { on: options.hash ?? true, maxBytes: options.maxHashBytes ?? 8 * 1024 * 1024, remembered: rememberedHashes(root), next: new Map() };
  const entries: FsEntry[] = [];
  const large: PendingHash[] = [];
  for (let index = 0; index < listed.length && index < maxFiles; index += 1) {
    const entry = statEntry(root, listed[index]!, hashing, large);
    if (entry) entries.push(entry);
    if (slicer.due()) await slicer.pause();
  }
  const vanished = await hashLarge(root, large, hashing);
  if (hashing.on) storeHashes(root, hashing.next);
  const kept = vanished.size === 0 ? entries : entries.filter((entry) => !vanished.has(entry));
  kept.sort((a, b) => byPath(a.path, b.path));
  return { root, taken_at: new Date().toISOString(), excluded: exclude, truncated, entries: kept };
}

/**
 * What changed from `before` to `after`, each list sorted: created, deleted, and modified — type, size or
 * sha256 differ, or (when either side has no hash) the mtime.
 */
export function diffSnapshots(before: FsSnapshot, after: FsSnapshot, bookkeeping: readonly string[] = []): FsDiff {
  const isBookkeeping = (p: string): boolean => bookkeeping.includes(p);
  const old = new Map(before.entries.map((entry) => [entry.path, entry]));
  const created: string[] = [];
  const modified: string[] = [];
  for (const entry of after.entries) {
    const previous = old.get(entry.path);
    old.delete(entry.path);
    if (!previous) created.push(entry.path);
    else if (
      previous.type !== entry.type
      || previous.size !== entry.size
      || previous.sha256 !== entry.sha256
      || ((entry.sha256 === null || previous.sha256 === null) && previous.mtime_ms !== entry.mtime_ms)
    ) modified.push(entry.path);
  }
  const deleted = [...old.keys()];
  const engineBookkeeping = [...created, ...modified, ...deleted].filter(isBookkeeping).sort(byPath);
  const agents = (paths: string[]): string[] => paths.filter((p) => !isBookkeeping(p)).sort(byPath);
  return { root: after.root, created: agents(created), modified: agents(modified), deleted: agents(deleted), engine_bookkeeping: engineBookkeeping };
}
