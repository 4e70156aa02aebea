/**
 * `agent-harness report [runs…] [--since 2h] [--out DIR] [--baseline FILE]`: the consistency report of CLI runs
 * (seed 001, Decision 1 and Migration 6) — the same consistency.json/md the Vitest reporter writes, built from each
 * run's conformance reports — and, with a baseline, what changed per engine and case; exit 1 on a regression.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Command } from 'commander';
import { AgentHarnessError } from '../errors/index.js';
import type { RunIndexEntry } from '../protocol/index.js';
import { writeJsonAtomic } from '../runtime/atomic-write.js';
import { MAX_AUDIT_FILE_BYTES, readInputBytesSync } from '../runtime/bounded-input.js';
import { resolveHarnessPaths } from '../runtime/paths.js';
import type { ConsistencyReport } from '../report/schema.js';
import type { CliStreams } from './output.js';

/** Default output directory, apart from the Vitest reporter's `reports/agent-harness`. */
export const DEFAULT_RUNS_REPORT_DIR = path.join('reports', 'agent-harness-runs');

/**
 * `30m`, `2h`, `7d` or an ISO date → the earliest creation time to include; `flag` names the option in the error
 * (`--since` for `report`, `--older-than` for `runs prune`).
 */
export function parseSince(value: string, now: Date = new Date(), flag = '--since'): Date {
  const relative = /^(\d+)\s*([smhd])$/.exec(value.trim());
  if (relative) {
    const unit = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 }[relative[2] as 's' | 'm' | 'h' | 'd'];
    return new Date(now.getTime() - Number(relative[1]) * unit);
  }
  const date = new Date(value);
  if (Number.isNaN(date.getTime()))
    throw new AgentHarnessError(
      'USAGE_ERROR',
      `${flag} takes a duration (30m, 2h, 7d) or an ISO date, not ${JSON.stringify(value)}.`,
    );
  return date;
}

async function readBaseline(file: string): Promise<ConsistencyReport> {
  const { ConsistencyReportSchema } = await import('../report/schema.js');
  // A FIFO, a device or a directory is INPUT_NOT_REGULAR_FILE at once, never waited on (bounded-input.ts).
  const text = readInputBytesSync(file, {
    what: 'baseline',
    maxBytes: MAX_AUDIT_FILE_BYTES,
    unreadableCode: 'CONFIG_INVALID',
  }).toString('utf8');
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new AgentHarnessError(
      'CONFIG_INVALID',
      `Baseline ${file} is not a readable JSON file: ${(error as Error).message}`,
      { cause: error },
    );
  }
  const parsed = ConsistencyReportSchema.safeParse(value);
  if (!parsed.success)
    throw new AgentHarnessError(
      'CONFIG_INVALID',
      `Baseline ${file} is not a consistency.json: ${parsed.error.issues[0]?.message ?? 'invalid'}`,
    );
  return parsed.data;
}

interface ReportOptions {
  since?: string;
  out?: string;
  baseline?: string;
  html?: boolean;
}

/** Runs `report`; returns the exit status. */
export async function reportCommand(
  streams: CliStreams,
  selectors: readonly string[],
  options: ReportOptions,
): Promise<number> {
  // Loaded here, not at the top: every start of the CLI loads this file (to register `report`), and `runs` too.
  const [
    { refreshRunIndex, resolveRunSelector },
    { buildConsistencyReport },
    { renderMarkdown },
    { diffAgainstBaseline },
    { runReportInputs, runCase },
  ] = await Promise.all([
    import('../runtime/run-store.js'),
    import('../report/build.js'),
    import('../report/render.js'),
    import('../report/baseline.js'),
    import('../report/run-inputs.js'),
  ]);
  const paths = resolveHarnessPaths();
  let runs: RunIndexEntry[];
  if (selectors.length > 0)
    runs = await Promise.all(selectors.map((selector) => resolveRunSelector(paths.runRoot, selector)));
  else {
    // The run directories, as `runs` reads them: one whose run.json cannot be used is named, not silently left out.
    const store = await refreshRunIndex(paths.runRoot, {
      onUnsaved: (message) => streams.stderr.write(`agent-harness: warning: ${message}\n`),
    });
    runs = store.runs;
    for (const broken of store.broken)
      streams.stderr.write(`agent-harness: warning: skipped run directory ${broken.run_dir}: ${broken.message}\n`);
  }
  if (options.since) {
    const since = parseSince(options.since);
    runs = runs.filter((run) => new Date(run.created_at) >= since);
  }
  const { inputs, skipped } = runReportInputs(runs);
  for (const file of skipped) streams.stderr.write(`agent-harness: warning: skipped unreadable ${file}\n`);
  const report = buildConsistencyReport(inputs, selectors.length > 0 ? 'runs given' : 'all runs');
  const outDir = path.resolve(options.out ?? DEFAULT_RUNS_REPORT_DIR);
  fs.mkdirSync(outDir, { recursive: true });
  await writeJsonAtomic(path.join(outDir, 'consistency.json'), report);
  fs.writeFileSync(path.join(outDir, 'consistency.md'), renderMarkdown(report));
  const baseline = options.baseline ? await readBaseline(options.baseline) : null;
  let htmlNote = '';
  if (options.html) {
    const { writeHtmlReport } = await import('../report/html-history.js');
    const written = writeHtmlReport(outDir, report, {
      runs: runs.map((run) => ({ run, testId: run.run_id, caseName: runCase(run) })),
      ...(baseline ? { baseline: { report: baseline, label: path.basename(options.baseline!) } } : {}),
    });
    htmlNote = `, report.html (history: ${path.relative(outDir, written.index)})`;
  }
  const s = report.summary;
  streams.stderr.write(
    `${runs.length} run(s), ${s.total} with conformance reports: ${s.passed} ok, ${s.failed} failed; ${report.matrix.length} case(s) on several engines, ${s.disagreements} disagreement(s).\nWrote ${path.join(outDir, 'consistency.json')}, consistency.md${htmlNote}\n`,
  );
  if (!options.baseline || !baseline) return 0;
  const diff = diffAgainstBaseline(report, baseline);
  for (const line of diff.changes) streams.stdout.write(`change: ${line}\n`);
  for (const line of diff.regressions) streams.stdout.write(`REGRESSION: ${line}\n`);
  streams.stderr.write(
    diff.regressions.length > 0
      ? `${diff.regressions.length} regression(s) against ${options.baseline}.\n`
      : `No regression against ${options.baseline}${diff.changes.length > 0 ? ` (${diff.changes.length} change(s))` : ''}.\n`,
  );
  return diff.regressions.length > 0 ? 1 : 0;
}

/** Registers `report`. */
export function registerReport(program: Command, streams: CliStreams, setExit: (code: number) => void): void {
  program
    .command('report')
    .description('consistency report of CLI runs (consistency.json/md), optionally checked against a baseline')
    .argument('[runs...]', 'run handles, ids or directories (default: every run under the run root)')
    .option('--since <when>', 'only runs created since a duration ago (30m, 2h, 7d) or an ISO date')
    .option('--out <dir>', `where consistency.json and consistency.md go (default ${DEFAULT_RUNS_REPORT_DIR})`)
    .option('--html', 'also write report.html (one self-contained file), a dated copy in history/ and index.html')
    .option(
      '--baseline <file>',
      'a saved consistency.json: print what changed per engine and case; exit 1 on a regression',
    )
    .addHelpText(
      'after',
      `
A case is what a run was asked (its --prompt, else its engine arguments): the same prompt on several engines is
one row of the engine matrix. A regression is a case that completes less, calls a different number of tools,
emits different FCMP event counts, warns more, or is missing; a new engine version is reported, not failed.

Examples:
  agent-harness report --since 1h
  cp reports/agent-harness-runs/consistency.json baseline.json     # save a baseline
  agent-harness report --since 1h --baseline baseline.json          # exit 1 on a regression
  agent-harness report --html --out reports/runs                    # open reports/runs/report.html`,
    )
    .action(async (selectors: string[], options: ReportOptions) => {
      setExit(await reportCommand(streams, selectors, options));
    });
}
