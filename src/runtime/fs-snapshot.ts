/**
 * Snapshot and diff of a run directory (`fs-before.N.json`, `fs-after.N.json`, `fs-diff.N.json`).
 *
 * A readdir walk rather than tinyglobby: with `followSymbolicLinks: false` tinyglobby (0.2.17) passes
 * `excludeSymlinks: true` to fdir, so symlinks would vanish from the snapshot instead of being recorded. The
 * walk includes dot files, never follows symlinks, never descends into excluded top-level entries, and skips
 * sockets, FIFOs and devices (reading a FIFO would block). Files that vanish between listing and hashing are
 * left out.
 */
import { createHash } from 'node:crypto';
import { createReadStream, type Dirent } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import type { FsDiff, FsEntry, FsSnapshot } from '../protocol/index.js';

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

/** Files hashed at the same time. */
const HASH_CONCURRENCY = 8;

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

/**
 * Relative POSIX paths of the files and symlinks under `root`, in walk order (names sorted per directory),
 * stopping once more than `limit` were found. A directory that vanishes or cannot be read is skipped.
 */
async function listTree(root: string, isExcluded: (name: string) => boolean, limit: number): Promise<string[]> {
  const found: string[] = [];
  const walk = async (rel: string): Promise<void> => {
    let entries: Dirent[];
    try {
      entries = await fs.readdir(rel === '' ? root : path.join(root, rel), { withFileTypes: true });
    } catch {
      return;
    }
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
 * A file that exists but cannot be read is kept with `sha256: null`.
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

/**
 * Takes a snapshot of `root` (a missing root gives no entries). Never throws for files that disappear while
 * it runs; entries are sorted by path.
 */
export async function snapshotTree(root: string, options: SnapshotOptions = {}): Promise<FsSnapshot> {
  const exclude = [...(options.exclude ?? ['.audit', '.git'])];
  const maxFiles = options.maxFiles ?? 20_000;
  const listed = await listTree(root, compileExclude(exclude), maxFiles);
  const truncated = listed.length > maxFiles;
  const queue = listed.slice(0, maxFiles);
  const entries: FsEntry[] = [];
  const worker = async (): Promise<void> => {
    for (let rel = queue.shift(); rel !== undefined; rel = queue.shift()) {
      const entry = await describeEntry(root, rel, options).catch(() => null);
      if (entry) entries.push(entry);
    }
  };
  await Promise.all(Array.from({ length: HASH_CONCURRENCY }, worker));
  entries.sort((a, b) => byPath(a.path, b.path));
  return { root, taken_at: new Date().toISOString(), excluded: exclude, truncated, entries };
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
