/**
 * `agent-harness runs [--engine ID] [--failed] [--last N] [--json]`: the runs under the run root, newest last,
 * with the test that started each one; `runs prune [--keep N] [--older-than 7d] [--dry-run]` removes old runs.
 * Listing rescans the run directories (the index is a cache) and lists, after the runs and whatever the filters,
 * every directory whose run.json cannot be used: `CORRUPT`/`MOVED` rows, `{ run_dir, corrupt: {...} }` in --json.
 * A run root that cannot be written (read-only, full) is listed all the same, with one warning on stderr.
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import type { Command } from 'commander';
import { AgentHarnessError } from '../errors/index.js';
import type { RunIndexEntry } from '../protocol/index.js';
import { resolveHarnessPaths, runHome } from '../runtime/paths.js';
import { stripDoneMarker } from '../translate/done-marker.js';
import type { BrokenRun } from '../runtime/run-store.js';
import { parsePositiveInt } from './options.js';
import type { CliStreams } from './output.js';
import { parseSince } from './report.js';

interface RunsOptions {
  json?: boolean;
  engine?: string;
  failed?: boolean;
  last?: number;
}

/** The runs that pass the filters, oldest first. */
export function filterRuns(runs: readonly RunIndexEntry[], options: RunsOptions): RunIndexEntry[] {
  let out = runs.filter(
    (run) =>
      (!options.engine || run.engine === options.engine) && (!options.failed || run.last_completion === 'failed'),
  );
  if (options.last) out = out.slice(-options.last);
  return out;
}

/** A `runs --json` entry for a directory whose run.json cannot be used; `corrupt` tells it from a run's entry. */
export interface CorruptRunListing {
  run_dir: string;
  corrupt: { code: BrokenRun['code']; file: string; message: string };
}

/** The --json entry of a broken run directory. */
export function corruptListing(broken: BrokenRun): CorruptRunListing {
  return { run_dir: broken.run_dir, corrupt: { code: broken.code, file: broken.file, message: broken.message } };
}

function table(runs: readonly RunIndexEntry[], broken: readonly BrokenRun[]): string {
  const rows = runs.map((run) => [
    run.handle,
    run.run_id,
    run.engine,
    String(run.attempts),
    run.session_id ?? '-',
    run.last_completion ?? '-',
    // A prompt made from an earlier agent's raw answer carries its done marker: the table, read by a person, not.
    stripDoneMarker(run.label ?? run.prompt) || '-',
  ]);
  for (const dir of broken) {
    rows.push([
      dir.code === 'RUN_DIR_MOVED' ? 'MOVED' : 'CORRUPT',
      path.basename(dir.run_dir),
      '-',
      '-',
      '-',
      dir.code === 'RUN_DIR_MOVED' ? 'moved' : 'corrupt',
      dir.message,
    ]);
  }
  const header = ['HANDLE', 'RUN ID', 'ENGINE', 'ATTEMPTS', 'SESSION', 'LAST', 'TEST / PROMPT'];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => (row[i] ?? '').length)));
  const format = (row: string[]): string =>
    row
      .map((cell, i) => (i === row.length - 1 ? cell : cell.padEnd(widths[i] ?? 0)))
      .join('  ')
      .trimEnd();
  return `${[header, ...rows].map(format).join('\n')}\n`;
}

/** Registers `runs` and `runs prune`. */
export function registerRuns(program: Command, streams: CliStreams): void {
  const runs = program
    .command('runs')
    .description('list runs (handle, run id, engine, attempts, session, last completion, the test that started it)')
    .option('--json', 'print the index entries as JSON')
    .option('--engine <id>', 'only runs of this engine')
    .option('--failed', 'only runs whose last attempt failed')
    .option('--last <n>', 'only the newest N runs', parsePositiveInt('--last'))
    .action(async (options: RunsOptions) => {
      const [{ refreshRunIndex }, { recoverRuns }] = await Promise.all([
        import('../runtime/run-store.js'),
        import('../core/seal-interrupted.js'),
      ]);
      const paths = resolveHarnessPaths();
      const store = await refreshRunIndex(paths.runRoot, {
        onUnsaved: (message) =>
          streams.stderr.write(`agent-harness: warning: ${message} Interrupted attempts are listed unsealed.\n`),
      });
      // Listing a run seals attempts whose harness died and reclaims their trust leases; a run root that cannot be
      // written is listed as it is.
      const all = store.unsaved ? store.runs : await recoverRuns(paths, store.runs);
      const selected = filterRuns(all, options);
      if (options.json) {
        streams.stdout.write(`${JSON.stringify([...selected, ...store.broken.map(corruptListing)], null, 2)}\n`);
        return;
      }
      if (all.length === 0 && store.broken.length === 0) {
        streams.stderr.write(`No runs under ${paths.runRoot}. Start one with: agent-harness demo\n`);
        return;
      }
      streams.stdout.write(table(selected, store.broken));
      if (store.broken.length > 0)
        streams.stderr.write(
          `${store.broken.length} run director${store.broken.length === 1 ? 'y has' : 'ies have'} an unusable run.json (CORRUPT/MOVED rows); restore or remove them.\n`,
        );
    });
  runs
    .command('prune')
    .description('remove old runs (their directories and index entries)')
    .option('--keep <n>', 'keep the newest N runs', (value: string) =>
      value === '0' ? 0 : parsePositiveInt('--keep')(value),
    )
    .option('--older-than <age>', 'remove runs created before this long ago (30m, 12h, 7d) or an ISO date')
    .option('--dry-run', 'list what would be removed')
    .action(async (options: { keep?: number; olderThan?: string; dryRun?: boolean }) => {
      if (options.keep === undefined && !options.olderThan)
        throw new AgentHarnessError(
          'USAGE_ERROR',
          'runs prune needs --keep N and/or --older-than AGE (nothing is removed without one).',
        );
      const { isDirectlyUnder, listRuns, removeRuns } = await import('../runtime/run-store.js');
      const paths = resolveHarnessPaths();
      const all = await listRuns(paths.runRoot);
      const cutoff = options.olderThan ? parseSince(options.olderThan, new Date(), '--older-than') : null;
      const kept = new Set(options.keep !== undefined ? all.slice(all.length - options.keep).map((r) => r.run_id) : []);
      const chosen = all.filter((run) => !kept.has(run.run_id) && (!cutoff || new Date(run.created_at) < cutoff));
      // Only a run directly under the run root is removed (removeRuns): the index may name others (a provider's
      // cwd, or the original of a copied run root), which the dry run must not list either.
      const inRoot = (run: RunIndexEntry): boolean => isDirectlyUnder(paths.runRoot, run);
      const doomed = chosen.filter(inRoot);
      for (const run of chosen.filter((r) => !inRoot(r)))
        streams.stderr.write(`agent-harness: not pruned (outside ${paths.runRoot}): ${run.handle} ${run.run_dir}\n`);
      if (options.dryRun) {
        streams.stdout.write(doomed.map((run) => `would remove ${run.handle} ${run.run_dir}\n`).join(''));
        return;
      }
      const removed = await removeRuns(
        paths.runRoot,
        doomed.map((run) => run.run_id),
      );
      // Each run's own HOME (its engines' sessions and config) goes with it.
      for (const run of removed) await fs.rm(runHome(paths, run.run_id).home, { recursive: true, force: true });
      streams.stderr.write(
        `Removed ${removed.length} run(s); ${all.length - removed.length} left under ${paths.runRoot}.\n`,
      );
    });
}
