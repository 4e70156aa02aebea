/**
 * File-system snapshot and diff of the run directory, `.audit/fs-before.N.json`, `fs-after.N.json`,
 * `fs-diff.N.json`. `.audit/` itself is never included.
 */
import * as z from 'zod';

/** One file in a snapshot (regular files and symlinks; directories are implied). */
export const FsEntrySchema = z.object({
  path: z.string(),
  type: z.enum(['file', 'symlink']),
  size: z.number().int().nonnegative(),
  sha256: z.string().nullable(),
  mtime_ms: z.number(),
});
/** One file in a snapshot. */
export type FsEntry = z.infer<typeof FsEntrySchema>;

/** A snapshot of a directory tree, paths relative to `root`, POSIX separators, sorted. */
export const FsSnapshotSchema = z.object({
  root: z.string(),
  taken_at: z.string(),
  excluded: z.array(z.string()),
  truncated: z.boolean(),
  entries: z.array(FsEntrySchema),
});
/** A snapshot. */
export type FsSnapshot = z.infer<typeof FsSnapshotSchema>;

/** What changed between two snapshots. */
export const FsDiffSchema = z.object({
  root: z.string(),
  created: z.array(z.string()),
  modified: z.array(z.string()),
  deleted: z.array(z.string()),
  /**
   * Files the engine itself writes on every run (its bookkeeping, e.g. opencode's `.opencode/.gitignore`), listed
   * apart so that created/modified/deleted hold the agent's work and mean the same on every engine.
   */
  engine_bookkeeping: z.array(z.string()).default([]),
});
/** A diff. */
export type FsDiff = z.infer<typeof FsDiffSchema>;
