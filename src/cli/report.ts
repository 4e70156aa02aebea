/**
 * `agent-harness report [runs…] [--since DATE] [--out DIR] [--baseline FILE]`: the Vitest reporter's
 * consistency.json/md for runs made from the shell, and a regression check against a saved report.
 */
import type { Command } from 'commander';
import fs from 'node:fs';
import path from 'node:path';
import { AgentHarnessError } from '../errors/index.js';
import type { RunIndexEntry } from '../protocol/index.js';
import { resolveHarnessPaths } from '../runtime/paths.js';
import { listRuns, resolveRunSelector } from '../runtime/run-store.js';
import { renderMarkdown } from '../vitest/report-render.js';
import type { CliStreams } from './output.js';
import { diffAgainstBaseline, readBaseline } from './report-baseline.js';
import { buildRunsReport } from './report-collect.js';

interface ReportOptions { since?: string; out?: string; baseline?: string }

async function selectRuns(selectors: readonly string[], since: string | undefined): Promise<RunIndexEntry[]> {
  const paths = resolveHarnessPaths();
  let runs = selectors.length > 0 ? await Promise.all(selectors.map((s) => resolveRunSelector(paths.runRoot, s))) : await listRuns(paths.runRoot);
  if (since !== undefined) {
    const t = Date.parse(since);
    if (Number.isNaN(t)) throw new AgentHarnessError('USAGE_ERROR', `--since must be a date or time (e.g. 2026-11-23 or 2026-11-23T14:00:00Z), not ${JSON.stringify(since)}.`);
    runs = runs.filter((run) => Date.parse(run.created_at) >= t);
  }
  // Oldest first, so that the newest run of a case is the one a baseline compares against.
  return [...runs].sort((a, b) => a.created_at.localeCompare(b.created_at));
}

/** Registers `report`. */
export function registerReport(program: Command, streams: CliStreams, setExit: (code: number) => void): void {
  program
    .command('report')
    .description('aggregate runs\' conformance reports into consistency.json/md; --baseline fails on a regression')
    .argument('[runs...]', 'run handles, ids or directories (default: every run in the run root)')
    .option('--since <date>', 'only runs created at or after this date/time')
    .option('--out <dir>', 'where to write consistency.json and consistency.md', 'reports/agent-harness')
    .option('--baseline <file>', 'a saved consistency.json: exit 1 and list what changed per engine and case')
    .addHelpText('after', `
Each run attempt is one test; its case is "<script basename> #<attempt>", so the same script run on two engines
forms a matrix row, and re-running it later compares against the baseline case by case (completion, tool calls,
diagnostics).

Examples:
  agent-harness report                                  every run → reports/agent-harness/consistency.{json,md}
  agent-harness report --since 2026-11-23 --out out/    today's runs
  cp reports/agent-harness/consistency.json baseline.json
  agent-harness report --baseline baseline.json         exit 1 and print the changes on a regression`)
    .action(async (selectors: string[], options: ReportOptions) => {
      const baseline = options.baseline ? readBaseline(options.baseline) : null;
      const runs = await selectRuns(selectors, options.since);
      const report = buildRunsReport(runs, 'agent-harness report');
      const out = path.resolve(options.out ?? 'reports/agent-harness');
      fs.mkdirSync(out, { recursive: true });
      fs.writeFileSync(path.join(out, 'consistency.json'), `${JSON.stringify(report, null, 2)}\n`);
      fs.writeFileSync(path.join(out, 'consistency.md'), renderMarkdown(report));
      streams.stderr.write(`Report: ${report.tests.length} attempt(s) of ${runs.length} run(s) → ${path.join(out, 'consistency.json')}\n`);
      if (!baseline) return;
      const changes = diffAgainstBaseline(baseline, report);
      if (changes.length === 0) {
        streams.stderr.write(`Baseline ${options.baseline}: no regression.\n`);
        return;
      }
      streams.stdout.write(`${changes.join('\n')}\n`);
      streams.stderr.write(`Baseline ${options.baseline}: ${changes.length} regression(s).\n`);
      setExit(1);
    });
}
