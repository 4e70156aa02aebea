/**
 * The data of an HTML report: the consistency report, every run it names read from its run directory (timelines
 * included), and a baseline (an earlier consistency.json: its regressions and changes, and the runs whose audit is
 * still on disk, for the aligned diff across reports).
 */
import path from 'node:path';
import type { RunIndexEntry } from '../protocol/index.js';
import { readRunRecord } from '../runtime/run-store.js';
import { readRunView } from './attempt-view.js';
import { diffAgainstBaseline } from './baseline.js';
import { caseName, engineFromName } from './build.js';
import type { ConsistencyReport, ConsistencyTest } from './schema.js';
import { VIEW_DATA_VERSION, type ViewData, type ViewRun } from './view-schema.js';

/** A run to show, with the test it belongs to and its case name (across engines). */
export interface ViewRunSource {
  run: RunIndexEntry;
  testId: string | null;
  caseName: string;
}

/** The runs of a report's tests whose run directory is still there (its `auditDir`'s parent). */
export function runsOfReport(report: ConsistencyReport): ViewRunSource[] {
  const out: ViewRunSource[] = [];
  const seen = new Set<string>();
  for (const test of report.tests) {
    const source = runOfTest(test);
    if (source && !seen.has(source.run.run_id)) {
      seen.add(source.run.run_id);
      out.push(source);
    }
  }
  // The runs of failed and excluded trials, which the Trials section links to.
  for (const row of report.statistics?.rows ?? [])
    for (const failure of row.failures) {
      const run = failure.auditDir ? readRunQuietly(path.dirname(failure.auditDir)) : null;
      if (run && !seen.has(run.run_id)) {
        seen.add(run.run_id);
        out.push({ run, testId: null, caseName: `${row.case} · ${row.arm} trial ${failure.trial + 1}` });
      }
    }
  return out;
}

function readRunQuietly(dir: string): RunIndexEntry | null {
  try {
    return readRunRecord(dir);
  } catch {
    return null;
  }
}

function runOfTest(test: ConsistencyTest): ViewRunSource | null {
  if (!test.auditDir) return null;
  let run: RunIndexEntry | null;
  try {
    run = readRunRecord(path.dirname(test.auditDir));
  } catch {
    return null;
  }
  if (!run) return null;
  const engine = test.engine ?? engineFromName(test.fullName) ?? run.engine;
  return { run, testId: test.id, caseName: caseName(test.fullName, engine) };
}

/** Most characters of timelines one report page embeds; past it, the timelines of later attempts are left out. */
export const MAX_PAGE_TIMELINE_CHARS = 96 * 1024 * 1024;

/** Leaves out the timelines past the page's budget (in order), saying so in each attempt left without one. */
function boundTimelines(runs: ViewRun[]): void {
  let used = 0;
  for (const run of runs)
    for (const attempt of run.attempts) {
      if (!attempt.timeline) continue;
      const size = attempt.timeline.reduce(
        (n, item) =>
          n +
          200 +
          (item.text?.length ?? 0) +
          (item.tool
            ? (item.tool.output?.length ?? 0) + (item.tool.input?.length ?? 0) + (item.tool.command?.length ?? 0)
            : 0),
        0,
      );
      used += size;
      if (used > MAX_PAGE_TIMELINE_CHARS) {
        attempt.timeline = null;
        attempt.omitted = `This report's timelines passed ${MAX_PAGE_TIMELINE_CHARS} characters; see this attempt with \`agent-harness view\` or in its .audit/ files.`;
      }
    }
}

/** What {@link buildViewData} needs besides the report. */
export interface ViewDataOptions {
  /** The runs to show (default: those the report's tests name). */
  runs?: readonly ViewRunSource[];
  /** An earlier report to compare with, and what to call it. */
  baseline?: { report: ConsistencyReport; label: string } | null;
  /** Directory the page is written to: run links are relative to it (null: no links). */
  pageDir?: string | null;
  title?: string;
  now?: Date;
}

/** Builds the page data. */
export function buildViewData(report: ConsistencyReport, options: ViewDataOptions = {}): ViewData {
  const pageDir = options.pageDir ?? null;
  const runs: ViewRun[] = (options.runs ?? runsOfReport(report)).map((source) =>
    readRunView(source.run, { pageDir, caseName: source.caseName, testId: source.testId }),
  );
  boundTimelines(runs);
  const baseline = options.baseline ?? null;
  const diff = baseline ? diffAgainstBaseline(report, baseline.report) : null;
  return {
    version: VIEW_DATA_VERSION,
    generatedAt: (options.now ?? new Date()).toISOString(),
    title: options.title ?? 'agent-harness report',
    report,
    runs,
    baseline:
      baseline && diff
        ? {
            label: baseline.label,
            report: baseline.report,
            regressions: diff.regressions,
            changes: diff.changes,
            runs: runsOfReport(baseline.report).map((source) =>
              readRunView(source.run, { pageDir, caseName: source.caseName, testId: source.testId, timeline: false }),
            ),
          }
        : null,
    live: null,
  };
}
