/**
 * `agent-harness runs [--json]`: the runs under the run root, newest last.
 */
import type { Command } from 'commander';
import { resolveHarnessPaths } from '../runtime/paths.js';
import { listRuns } from '../runtime/run-store.js';
import { recoverRuns } from '../core/seal-attempt.js';
import type { CliStreams } from './output.js';

/** Registers `runs`. */
export function registerRuns(program: Command, streams: CliStreams): void {
  program
    .command('runs')
    .description('list runs (handle, run id, engine, attempts, session, last completion)')
    .option('--json', 'print the index entries as JSON')
    .action(async (options: { json?: boolean }) => {
      const paths = resolveHarnessPaths();
      const runs = await recoverRuns(paths, await listRuns(paths.runRoot));
      if (options.json) {
        streams.stdout.write(`${JSON.stringify(runs, null, 2)}\n`);
        return;
      }
      if (runs.length === 0) {
        streams.stderr.write(`No runs under ${paths.runRoot}. Start one with: agent-harness demo\n`);
        return;
      }
      const rows = runs.map((run) => [run.handle, run.run_id, run.engine, String(run.attempts), run.session_id ?? '-', run.last_completion ?? '-']);
      const header = ['HANDLE', 'RUN ID', 'ENGINE', 'ATTEMPTS', 'SESSION', 'LAST'];
      const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => (row[i] ?? '').length)));
      const format = (row: string[]): string => row.map((cell, i) => cell.padEnd(widths[i] ?? 0)).join('  ').trimEnd();
      streams.stdout.write(`${[header, ...rows].map(format).join('\n')}\n`);
    });
}
