/**
 * Writes the HTML report with its history: `report.html` (the latest, beside consistency.json), a copy in
 * `history/<timestamp>/` with that run's consistency.json (the next run's baseline), and `index.html` listing every
 * report kept, newest first, by relative links. Nothing is overwritten but `report.html` and the index; the oldest
 * reports past {@link HISTORY_KEEP} are removed.
 */
import { writeFileAtomicSync } from '../runtime/atomic-write.js';
import { MAX_AUDIT_FILE_BYTES, readInputBytesSync } from '../runtime/bounded-input.js';
import fs from 'node:fs';
import path from 'node:path';
import { ConsistencyReportSchema, type ConsistencyReport } from './schema.js';
import { renderHtmlReport } from './render-html.js';
import { buildViewData, type ViewRunSource } from './view-data.js';
import type { ViewRun } from './view-schema.js';

/** How many reports `history/` keeps. */
export const HISTORY_KEEP = 20;

/** What {@link writeHtmlReport} wrote. */
export interface HtmlReportFiles {
  /** `<dir>/report.html`. */
  html: string;
  /** `<dir>/history/<stamp>/report.html`. */
  historyHtml: string;
  /** `<dir>/index.html`. */
  index: string;
}

const STAMP = /^\d{8}T\d{6}(?:\d{3})?Z(?:-\d+)?$/;

function stampOf(date: Date): string {
  return date
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.(\d{3})Z$/, '$1Z');
}

/** The newest report kept in `<dir>/history/` (its consistency.json), to compare the next one with; null if none. */
export function latestHistoryReport(dir: string): { report: ConsistencyReport; label: string } | null {
  for (const stamp of historyStamps(dir)) {
    try {
      const report = ConsistencyReportSchema.parse(JSON.parse(readHistoryReport(dir, stamp)));
      return { report, label: `previous run (${report.generatedAt})` };
    } catch {
      // A damaged entry: try the one before it.
    }
  }
  return null;
}

/**
 * The text of a kept consistency.json. A FIFO, a device or a directory there is refused at once (thrown, so the
 * entry counts as damaged), never waited on.
 */
function readHistoryReport(dir: string, stamp: string): string {
  const file = path.join(dir, 'history', stamp, 'consistency.json');
  return readInputBytesSync(file, { what: 'kept report', maxBytes: MAX_AUDIT_FILE_BYTES }).toString('utf8');
}

function historyStamps(dir: string): string[] {
  let names: string[];
  try {
    names = fs.readdirSync(path.join(dir, 'history'));
  } catch {
    return [];
  }
  return names
    .filter((name) => STAMP.test(name))
    .sort()
    .reverse();
}

const escapeHtml = (text: string): string =>
  text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

function renderIndex(dir: string): string {
  const rows = historyStamps(dir).map((stamp) => {
    let summary = '';
    try {
      const report = ConsistencyReportSchema.parse(JSON.parse(readHistoryReport(dir, stamp)));
      const s = report.summary;
      summary = `${report.generatedAt} — ${s.total} tests: ${s.passed} passed, ${s.failed} failed, ${s.skipped} skipped; ${s.disagreements} disagreement(s)`;
    } catch {
      summary = stamp;
    }
    return `<li><a href="history/${encodeURIComponent(stamp)}/report.html">${escapeHtml(summary)}</a></li>`;
  });
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'">
<title>agent-harness reports</title>
<style>body{font-family:system-ui,sans-serif;margin:20px;font-size:14px}li{margin:4px 0}</style></head>
<body><h1>agent-harness reports</h1><p><a href="report.html">latest</a></p><ol>${rows.join('')}</ol></body></html>
`;
}

/**
 * Writes the report's HTML into `dir` (with history and index). The baseline is `baseline` when given, else the
 * newest report in the history.
 */
export function writeHtmlReport(
  dir: string,
  report: ConsistencyReport,
  options: {
    runs?: readonly ViewRunSource[];
    baseline?: { report: ConsistencyReport; label: string } | null;
    title?: string;
    now?: Date;
  } = {},
): HtmlReportFiles {
  fs.mkdirSync(dir, { recursive: true });
  const now = options.now ?? new Date();
  const baseline = options.baseline === undefined ? latestHistoryReport(dir) : options.baseline;
  fs.mkdirSync(path.join(dir, 'history'), { recursive: true });
  // Created exclusively: two runs ending in the same millisecond (two Vitest processes) each get their own.
  let historyDir = '';
  for (let n = 0; !historyDir; n++) {
    const candidate = path.join(dir, 'history', n === 0 ? stampOf(now) : `${stampOf(now)}-${n}`);
    try {
      fs.mkdirSync(candidate);
      historyDir = candidate;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
  }
  const common = {
    baseline,
    now,
    ...(options.runs ? { runs: options.runs } : {}),
    ...(options.title ? { title: options.title } : {}),
  };
  const files: HtmlReportFiles = {
    html: path.join(dir, 'report.html'),
    historyHtml: path.join(historyDir, 'report.html'),
    index: path.join(dir, 'index.html'),
  };
  const data = buildViewData(report, { ...common, pageDir: dir });
  // Replaced whole: a reader, or another run writing it too, never sees half.
  writeFileAtomicSync(files.html, renderHtmlReport(data));
  // The history copy is two directories deeper: its links to run directories go up two more.
  const deeper = (runs: ViewRun[]): ViewRun[] =>
    runs.map((run) => ({ ...run, href: run.href === null ? null : `../../${run.href}` }));
  fs.writeFileSync(
    files.historyHtml,
    renderHtmlReport({
      ...data,
      runs: deeper(data.runs),
      baseline: data.baseline ? { ...data.baseline, runs: deeper(data.baseline.runs) } : null,
    }),
  );
  fs.writeFileSync(path.join(historyDir, 'consistency.json'), `${JSON.stringify(report, null, 2)}\n`);
  for (const old of historyStamps(dir).slice(HISTORY_KEEP))
    fs.rmSync(path.join(dir, 'history', old), { recursive: true, force: true });
  writeFileAtomicSync(files.index, renderIndex(dir));
  return files;
}
