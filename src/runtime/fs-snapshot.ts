/**
 * Snapshot and diff of a run directory (`fs-before.N.json`, `fs-after.N.json`, `fs-diff.N.json`).
 * A walk that includes dot files, records symlinks without following them, and never descends into the
 * excluded top-level entries; files are hashed with sha256. A file that vanishes mid-walk is left out.
 */
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import type { FsDiff, FsEntry, FsSnapshot } from '../protocol/index.js';

/** Options of {@link snapshotTree}. */
export interface SnapshotOptions {
  /** Top-level entry names to leave out (default `['.audit']`). */
  exclude?: readonly string[];
  /** At most this many files (default 20000); past it the snapshot is marked truncated. */
  maxFiles?: number;
  /** Hash files up to this size (default 8 MiB); larger ones get `sha256: null`. */
  maxHashBytes?: number;
}

async function hashFile(file: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(file)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

/** Takes a snapshot of `root`. Never throws for files that disappear while it runs. */
export async function snapshotTree(root: string, options: SnapshotOptions = {}): Promise<FsSnapshot> {
  const exclude = [...(options.exclude ?? ['.audit'])];
  const maxFiles = options.maxFiles ?? 20_000;
  const maxHashBytes = options.maxHashBytes ?? 8 * 1024 * 1024;
  const files: string[] = [];
  const walk = async (rel: string): Promise<void> => {
    let entries: import('node:fs').Dirent[];
    try {
      entries = await fs.readdir(path.join(root, rel), { withFileTypes: true });
    } catch {
      return; // vanished or unreadable
    }
    for (const entry of entries) {
      const child = rel === '' ? entry.name : `${rel}/${entry.name}`;
      if (rel === '' && exclude.includes(entry.name)) continue;
      if (entry.isDirectory()) await walk(child);
      else files.push(child);
      if (files.length > maxFiles) return;
    }
  };
  await walk('');
  files.sort();
  const truncated = files.length > maxFiles;
  const entries: FsEntry[] = [];
  for (const rel of files.slice(0, maxFiles)) {
    const abs = path.join(root, rel);
    try {
      const stat = await fs.lstat(abs);
      if (stat.isSymbolicLink()) {
        const target = await fs.readlink(abs);
        entries.push({ path: rel, type: 'symlink', size: stat.size, sha256: createHash('sha256').update(target).digest('hex'), mtime_ms: stat.mtimeMs });
      } else if (stat.isFile()) {
        const sha256 = stat.size <= maxHashBytes ? await hashFile(abs) : null;
        entries.push({ path: rel, type: 'file', size: stat.size, sha256, mtime_ms: stat.mtimeMs });
      }
    } catch {
      // vanished between listing and reading
    }
  }
  return { root, taken_at: new Date().toISOString(), excluded: exclude, truncated, entries };
}

/** What changed from `before` to `after`: created, modified (size or content; mtime when unhashed), deleted. */
export function diffSnapshots(before: FsSnapshot, after: FsSnapshot): FsDiff {
  const old = new Map(before.entries.map((entry) => [entry.path, entry]));
  const created: string[] = [];
  const modified: string[] = [];
  for (const entry of after.entries) {
    const previous = old.get(entry.path);
    if (!previous) created.push(entry.path);
    else if (
      previous.type !== entry.type
      || previous.size !== entry.size
      || previous.sha256 !== entry.sha256
      || (entry.sha256 === null && previous.mtime_ms !== entry.mtime_ms)
    ) modified.push(entry.path);
    old.delete(entry.path);
  }
  return { root: after.root, created, modified, deleted: [...old.keys()].sort() };
}
