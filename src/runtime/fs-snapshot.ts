/**
 * Snapshot and diff of a run directory (`fs-before.N.json`, `fs-after.N.json`, `fs-diff.N.json`).
 *
 * The tree is listed by `fs-tree-walk.ts` (dot files in, symlinks recorded and never followed, sockets, FIFOs and
 * devices skipped). Files that vanish between listing and lstat are left out; those that vanish between lstat and
 * hashing stay, unhashed (they existed when listed).
 *
 * Issue 13: an attempt snapshots the run directory before and after, and 10,000 small files used to add ~2.4 s
 * (every file read twice through streams). Now each file is lstat'ed, and read only when its stat differs from the
 * previous snapshot of the root in this process (`fs-hash-cache.ts`); the JSON written is unchanged. A new run
 * directory has no remembered hashes, so its before-snapshot would still read every file before the engine could
 * start: `startSnapshot` hands out the listing at once and hashes the rest while the engine runs, keeping a hash only
 * when the file's stats prove it is the listed content (`fs-file-hash.ts`). What is left is the lstat of every file,
 * twice per attempt: the walk lstats each entry by name and hands the `Stats` on (no `Dirent`, no second lstat), and
 * a file whose remembered hash holds costs no object but its entry (issue 44).
 */
import { createHash } from 'node:crypto';
import fsSync, { type Stats } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import type { FsDiff, FsEntry, FsSnapshot } from '../protocol/index.js';
import { hashLargeFileIfUnchanged, hashSmallFileIfUnchanged } from './fs-file-hash.js';
import {
  cachedHash,
  isRacy,
  rememberedHashes,
  recordHash,
  storeHashes,
  type RememberedHash,
  type RootHashes,
} from './fs-hash-cache.js';
import { byPath, compileExclude, under, walkTree } from './fs-tree-walk.js';
import { mapAtMost } from './map-at-most.js';
import { createSlicer, type Slicer } from './slicer.js';

export { clearHashCache } from './fs-hash-cache.js';

/** Options of {@link snapshotTree} and {@link startSnapshot}. */
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
  /**
   * {@link startSnapshot} only: when more files than this are left to hash in the background (no remembered hash),
   * none of them is read: they keep `sha256: null`, remembered so, and the next snapshot of the root reads only those
   * whose stat changed (its diff then reports them modified, unable to tell a rewrite of the same bytes). Default:
   * no limit. An attempt's before-snapshot sets it: hashing 10,000 files beside a 0.2 s codex turn took the engine
   * ~45 ms longer on two CPUs, wherever the hashing ran.
   */
  hashLimit?: number;
}

/** Files larger than this are read asynchronously in chunks, `HASH_CONCURRENCY` at a time; smaller ones in one read. */
const SMALL_FILE_BYTES = 64 * 1024;
/** Large files hashed at the same time. */
const HASH_CONCURRENCY = 8;

/**
 * Opened without following a link or blocking on a FIFO: the run directory is the agent's, and it may swap the file
 * for a link or a FIFO between the walk's `lstat` and this open (a blocking open would hold a thread-pool thread).
 */
const HASH_OPEN_FLAGS = fsSync.constants.O_RDONLY | fsSync.constants.O_NOFOLLOW | fsSync.constants.O_NONBLOCK;

/** sha256 of a regular file's contents, hex; rejects for anything else at that path by the time it is opened. */
export async function hashFile(file: string): Promise<string> {
  const handle = await fsSync.promises.open(file, HASH_OPEN_FLAGS);
  try {
    if (!(await handle.stat()).isFile())
      throw Object.assign(new Error(`${file} is not a regular file any more`), { code: 'EINVAL' });
    const hash = createHash('sha256');
    for await (const chunk of handle.createReadStream({ autoClose: false })) hash.update(chunk as Buffer);
    return hash.digest('hex');
  } finally {
    await handle.close();
  }
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
export async function describeEntry(
  root: string,
  rel: string,
  options: Pick<SnapshotOptions, 'hash' | 'maxHashBytes'> = {},
): Promise<FsEntry | null> {
  const abs = path.join(root, rel);
  try {
    const stat = await fs.lstat(abs);
    if (stat.isSymbolicLink()) {
      const target = await fs.readlink(abs);
      return {
        path: rel,
        type: 'symlink',
        size: stat.size,
        sha256: createHash('sha256').update(target).digest('hex'),
        mtime_ms: stat.mtimeMs,
      };
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

/**
 * What a snapshot hashes with: the option values, the hashes remembered for the root, those it records, and the
 * files the listing left to hash.
 */
interface Hashing {
  root: string;
  /** The path of a listed entry under `root` ({@link under}). */
  at: (rel: string) => string;
  on: boolean;
  maxBytes: number;
  remembered: RootHashes;
  next: RootHashes;
  /** Racy files (see {@link statEntry}): hashed before the listing is handed out. */
  now: PendingHash[];
  /** Every other file without a remembered hash: hashed by `finish()`, vouched for by its listing stat. */
  later: PendingHash[];
}

/**
 * A listed file whose hash is still to be taken, with the identity of the lstat it was listed with and Date.now()
 * before it. Only the identity is kept, not the whole `Stats` (with its four `Date`s): a new directory's listing holds
 * every file pending, and the smaller objects save its garbage collector ~1.5 ms per 10,000 files.
 */
interface PendingHash {
  entry: FsEntry;
  stat: RememberedHash;
  statAt: number;
}

/**
 * The entry of `rel` from its lstat (taken at or after `statAt`, Date.now() before it), its hash reused when the stat
 * is unchanged since the root's last snapshot. A file that needs reading goes to `hashing.later`, or to `hashing.now`
 * when its stat is racy (written within a timestamp tick or so of the listing: the harness's own files, seeded just
 * before): a later read could not tell its listed content from a same-tick rewrite. Null when it is a symlink that
 * vanished before its readlink. The identity of a stat is copied out only for a file left to hash: a file whose
 * remembered hash is reused (every unchanged file of an after-snapshot) costs no object but its entry.
 */
function statEntry(rel: string, stat: Stats, statAt: number, hashing: Hashing): FsEntry | null {
  if (stat.isSymbolicLink()) {
    let target: string;
    try {
      target = fsSync.readlinkSync(hashing.at(rel));
    } catch {
      return null;
    }
    return {
      path: rel,
      type: 'symlink',
      size: stat.size,
      sha256: createHash('sha256').update(target).digest('hex'),
      mtime_ms: stat.mtimeMs,
    };
  }
  const entry: FsEntry = { path: rel, type: 'file', size: stat.size, sha256: null, mtime_ms: stat.mtimeMs };
  if (!hashing.on || stat.size > hashing.maxBytes) return entry;
  const cached = cachedHash(hashing.remembered, rel, stat);
  if (cached !== undefined) {
    entry.sha256 = cached.sha256;
    hashing.next.set(rel, cached);
    return entry;
  }
  // Shaped as a remembered hash, so that a file left unread past the hash limit is remembered as is.
  const identity: RememberedHash = {
    dev: stat.dev,
    ino: stat.ino,
    size: stat.size,
    mtimeMs: stat.mtimeMs,
    ctimeMs: stat.ctimeMs,
    sha256: null,
  };
  (isRacy(identity, statAt) ? hashing.now : hashing.later).push({ entry, stat: identity, statAt });
  return entry;
}

/**
 * The entries of the first `maxFiles` files and symlinks under the root, each lstat'ed as the walk reaches it (in walk
 * order; those that vanished left out), and how many the walk found (one past `maxFiles` when there are more).
 */
async function listEntries(
  isExcluded: (name: string) => boolean,
  maxFiles: number,
  hashing: Hashing,
  slicer: Slicer,
): Promise<{ found: number; entries: FsEntry[] }> {
  const entries: FsEntry[] = [];
  const found = await walkTree(hashing.root, isExcluded, maxFiles, slicer, (rel, stat, listedAt) => {
    const entry = statEntry(rel, stat, listedAt, hashing);
    if (entry) entries.push(entry);
  });
  return { found, entries };
}

/**
 * Hashes the files of `jobs` as they were listed (`fs-file-hash.ts`), small ones synchronously in slices, large
 * ones `HASH_CONCURRENCY` at a time; `settle` gets each hash that the file's stats vouch for, which is also
 * remembered. A file changed, gone or unreadable since its listing is left out (its entry keeps `sha256: null`).
 */
async function hashJobs(
  jobs: readonly PendingHash[],
  hashing: Hashing,
  slicer: Slicer,
  settle: (job: PendingHash, sha256: string) => void,
): Promise<void> {
  const done = (job: PendingHash, sha256: string | null): void => {
    if (sha256 === null) return;
    settle(job, sha256);
    recordHash(hashing.next, job.entry.path, job.stat, sha256, job.statAt);
  };
  const large: PendingHash[] = [];
  for (const job of jobs) {
    if (job.stat.size > SMALL_FILE_BYTES) large.push(job);
    else done(job, hashSmallFileIfUnchanged(hashing.at(job.entry.path), job.stat));
    if (slicer.due()) await slicer.pause();
  }
  await mapAtMost(large, HASH_CONCURRENCY, async (job) =>
    done(job, await hashLargeFileIfUnchanged(hashing.at(job.entry.path), job.stat)),
  );
}

/** Longest slice (ms) of the background hashing. */
const BACKGROUND_SLICE_MS = 1;

/** What {@link startSnapshot} gives: a snapshot whose listing is taken and whose hashing may still be running. */
export interface StartedSnapshot {
  /**
   * The snapshot as listed: every path, type, size and mtime as of the listing; `sha256` set for symlinks, for files
   * whose stat is unchanged since a remembered hash (`fs-hash-cache.ts`), and for files written just before the
   * listing (read at once); null for the rest until hashed. `finish()` never modifies it.
   */
  listed: FsSnapshot;
  /**
   * The same snapshot with the hashes of the rest, taken in the background since the listing (it starts at once, in
   * short slices, so it runs while the caller's engine does). A hash is kept only when the file is provably
   * unchanged since its listing stat (`fs-file-hash.ts`); a file changed, gone or unreadable since keeps
   * `sha256: null`, which {@link diffSnapshots} reports as modified against a hashed after-entry (and compares by
   * mtime against an unhashed one). Never rejects for such files; idempotent (every call returns the same promise),
   * and only waits while hashing is still under way. Resolving stores the root's hashes for the next snapshot. Same
   * `taken_at`, paths and order as `listed`.
   */
  finish(): Promise<FsSnapshot>;
}

/**
 * Lists `root` now (readdir + lstat of every file; a missing root gives no entries) and leaves the content hashing
 * that no remembered hash covers to `finish()`, so a caller can start its engine right after the listing: the
 * before-snapshot of an attempt, whose hashing (every file, in a new run directory) used to delay the spawn.
 * Never throws for files that disappear while it runs; entries are sorted by path.
 */
export async function startSnapshot(root: string, options: SnapshotOptions = {}): Promise<StartedSnapshot> {
  const exclude = [...(options.exclude ?? ['.audit', '.git'])];
  const maxFiles = options.maxFiles ?? 20_000;
  const slicer = createSlicer();
  const hashing: Hashing = {
    root,
    at: under(root),
    on: options.hash ?? true,
    maxBytes: options.maxHashBytes ?? 8 * 1024 * 1024,
    remembered: rememberedHashes(root),
    next: new Map(),
    now: [],
    later: [],
  };
  const { found, entries } = await listEntries(compileExclude(exclude), maxFiles, hashing, slicer);
  // Not handed out yet: these entries may take their hashes in place.
  await hashJobs(hashing.now, hashing, slicer, (job, sha256) => {
    job.entry.sha256 = sha256;
  });
  if (options.hashLimit !== undefined && hashing.later.length > options.hashLimit) {
    // Too many to read beside an engine: left unread, and remembered so (null), so that the next snapshot of the
    // root reads only those whose stat changed. (None is racy: those were read at once, above.)
    for (const job of hashing.later) hashing.next.set(job.entry.path, job.stat);
    hashing.later = [];
  }
  entries.sort((a, b) => byPath(a.path, b.path));
  const listed: FsSnapshot = {
    root,
    taken_at: new Date().toISOString(),
    excluded: exclude,
    truncated: found > maxFiles,
    entries,
  };
  const finished = hashLater(listed, hashing);
  // finish() reports a failure; one nobody asked for must not end the process as an unhandled rejection.
  finished.catch(() => undefined);
  return { listed, finish: () => finished };
}

/** The snapshot `listed` with the hashes of `hashing.later`; stores the root's hashes when done. */
async function hashLater(listed: FsSnapshot, hashing: Hashing): Promise<FsSnapshot> {
  const hashes = new Map<FsEntry, string>();
  if (hashing.later.length > 0) {
    // First a turn of the event loop: the caller gets on with its spawn before the first slice runs. Then short
    // slices: the engine's output and model requests, served by this process's event loop meanwhile, wait at most
    // one slice.
    const slicer = createSlicer(BACKGROUND_SLICE_MS);
    await slicer.pause();
    await hashJobs(hashing.later, hashing, slicer, (job, sha256) => hashes.set(job.entry, sha256));
  }
  if (hashing.on) storeHashes(hashing.root, hashing.next);
  if (hashes.size === 0) return listed;
  return {
    ...listed,
    entries: listed.entries.map((entry) => {
      const sha256 = hashes.get(entry);
      return sha256 === undefined ? entry : { ...entry, sha256 };
    }),
  };
}

/**
 * Takes a snapshot of `root` (a missing root gives no entries): {@link startSnapshot} and its `finish()` at once.
 * Never throws for files that disappear while it runs (a file listed but gone before it was read stays, unhashed);
 * entries are sorted by path.
 *
 * Change detection is stat-based: a file whose inode, size, mtime and ctime are those it had in the previous
 * snapshot of the same root in this process keeps the hash taken then, unread; only new or changed files are
 * read (`fs-hash-cache.ts` has the rule, the racy case and the blind spot). With `hash: false` nothing is read or remembered.
 */
export async function snapshotTree(root: string, options: SnapshotOptions = {}): Promise<FsSnapshot> {
  return (await startSnapshot(root, options)).finish();
}

/** `entries` in path order: as given when they are (a snapshot's always are), else a sorted copy. */
function inPathOrder(entries: readonly FsEntry[]): readonly FsEntry[] {
  for (let index = 1; index < entries.length; index += 1) {
    if (!(entries[index - 1]!.path < entries[index]!.path)) return [...entries].sort((a, b) => byPath(a.path, b.path));
  }
  return entries;
}

/** True when `entry` differs from `previous`, the same path before: see {@link diffSnapshots}. */
function isModified(previous: FsEntry, entry: FsEntry): boolean {
  return (
    previous.type !== entry.type ||
    previous.size !== entry.size ||
    previous.sha256 !== entry.sha256 ||
    ((entry.sha256 === null || previous.sha256 === null) && previous.mtime_ms !== entry.mtime_ms)
  );
}

/**
 * What changed from `before` to `after`, each list sorted: created, deleted, and modified — type, size or
 * sha256 differ (a file hashed on one side only counts as modified), or, when neither side has a hash, the mtime.
 * One merge of the two entry lists in path order (a snapshot's order; others are sorted first).
 */
export function diffSnapshots(before: FsSnapshot, after: FsSnapshot, bookkeeping: readonly string[] = []): FsDiff {
  const isBookkeeping = (p: string): boolean => bookkeeping.includes(p);
  const [old, now] = [inPathOrder(before.entries), inPathOrder(after.entries)];
  const created: string[] = [];
  const modified: string[] = [];
  const deleted: string[] = [];
  let [i, j] = [0, 0];
  while (i < old.length || j < now.length) {
    const previous = old[i];
    const entry = now[j];
    if (entry === undefined || (previous !== undefined && previous.path < entry.path)) {
      deleted.push(previous!.path);
      i += 1;
    } else if (previous === undefined || entry.path < previous.path) {
      created.push(entry.path);
      j += 1;
    } else {
      if (isModified(previous, entry)) modified.push(entry.path);
      i += 1;
      j += 1;
    }
  }
  const engineBookkeeping = [...created, ...modified, ...deleted].filter(isBookkeeping).sort(byPath);
  const agents = (paths: string[]): string[] => paths.filter((p) => !isBookkeeping(p)).sort(byPath);
  return {
    root: after.root,
    created: agents(created),
    modified: agents(modified),
    deleted: agents(deleted),
    engine_bookkeeping: engineBookkeeping,
  };
}
