/**
 * The consistency report of CLI runs: every run's `conformance-report.N.json` turned into the same records the
 * Vitest reporter builds from test meta, so `agent-harness report` writes the same consistency.json/md. A case is
 * what the run was asked (its prompt, else its engine argv), so one prompt run on several engines is one matrix row.
 */
import fs from 'node:fs';
import path from 'node:path';
import { ConformanceReportSchema, type ConformanceReport, type RunIndexEntry } from '../protocol/index.js';
import { MAX_AUDIT_FILE_BYTES, readInputBytesSync } from '../runtime/bounded-input.js';
import { AUDIT_DIR } from '../runtime/run-store.js';
import type { ReportInput } from './build.js';
import type { AgentHarnessAttemptRecord } from './attempt-record.js';

/** The case a run belongs to: its prompt, else its start argv, else the run id. */
export function runCase(run: RunIndexEntry): string {
  return run.prompt ?? (run.start_args && run.start_args.length > 0 ? run.start_args.join(' ') : run.run_id);
}

/** The run's conformance reports, by attempt; unreadable ones are listed in `skipped`. */
export function readConformanceReports(run: RunIndexEntry): { reports: ConformanceReport[]; skipped: string[] } {
  const dir = path.join(run.run_dir, AUDIT_DIR);
  const names = fs.existsSync(dir) ? fs.readdirSync(dir).filter((n) => /^conformance-report\.\d+\.json$/.test(n)) : [];
  const reports: ConformanceReport[] = [];
  const skipped: string[] = [];
  for (const name of names.sort((a, b) => Number(a.split('.')[1]) - Number(b.split('.')[1]))) {
    const file = path.join(dir, name);
    try {
      // Read as an input: a FIFO left in the run directory in place of a report is skipped, not waited on.
      reports.push(
        ConformanceReportSchema.parse(
          JSON.parse(
            readInputBytesSync(file, { what: 'conformance report', maxBytes: MAX_AUDIT_FILE_BYTES }).toString('utf8'),
          ),
        ),
      );
    } catch {
      skipped.push(file);
    }
  }
  return { reports, skipped };
}

/** The cassette counts of an attempt, from its meta (`model.cassette`); undefined when none or unreadable. */
function cassetteOf(run: RunIndexEntry, attempt: number): AgentHarnessAttemptRecord['cassette'] {
  try {
    const file = path.join(run.run_dir, AUDIT_DIR, `meta.${attempt}.json`);
    const meta = JSON.parse(
      readInputBytesSync(file, { what: 'attempt meta', maxBytes: MAX_AUDIT_FILE_BYTES }).toString('utf8'),
    );
    const cassette = meta?.model?.cassette;
    if (!cassette || (cassette.mode !== 'record' && cassette.mode !== 'replay')) return undefined;
    const count = (value: unknown): number => (typeof value === 'number' && value >= 0 ? value : 0);
    return {
      mode: cassette.mode,
      exact: count(cassette.exact),
      divergent: count(cassette.divergent),
      missed: count(cassette.missed),
      unused: count(cassette.unused),
    };
  } catch {
    return undefined;
  }
}

function attemptRecord(run: RunIndexEntry, report: ConformanceReport): AgentHarnessAttemptRecord {
  const cassette = cassetteOf(run, report.attempt);
  return {
    runId: run.run_id,
    attempt: report.attempt,
    launch: report.launch === 'resume' ? 'resume' : 'start',
    exitCode: null,
    completion: { state: report.completion.state, reason: report.completion.reason },
    fcmpCounts: Object.fromEntries(
      Object.entries(report.fcmp_counts).filter((e): e is [string, number] => typeof e[1] === 'number'),
    ),
    auditDir: path.join(run.run_dir, AUDIT_DIR),
    durationMs: report.metrics.duration_ms ?? 0,
    usage: report.metrics.usage,
    toolCalls: report.tool_call_count,
    retry: 0,
    engineVersion: report.engine_version ?? null,
    engineVersionChecked: report.engine_version_checked ?? null,
    ...(report.completion.code ? { failureCode: report.completion.code } : {}),
    ...(cassette ? { cassette } : {}),
  };
}

/** One report record per run that has at least one conformance report. */
export function runReportInputs(runs: readonly RunIndexEntry[]): { inputs: ReportInput[]; skipped: string[] } {
  const inputs: ReportInput[] = [];
  const skipped: string[] = [];
  for (const run of runs) {
    const read = readConformanceReports(run);
    skipped.push(...read.skipped);
    if (read.reports.length === 0) continue;
    const attempts = read.reports.map((report) => attemptRecord(run, report));
    const last = attempts.at(-1)!;
    const name = runCase(run);
    inputs.push({
      id: run.run_id,
      name,
      fullName: `${name} > ${run.engine}`,
      project: 'runs',
      file: path.dirname(run.run_dir),
      state: last.completion.state === 'failed' || last.completion.state === 'interrupted' ? 'failed' : 'passed',
      durationMs: attempts.reduce((n, a) => n + a.durationMs, 0),
      retryCount: 0,
      flaky: false,
      errors:
        last.completion.state === 'failed'
          ? [`${last.failureCode ?? last.completion.reason}: attempt ${last.attempt} failed`]
          : [],
      meta: { engine: run.engine, runId: run.run_id, handle: run.handle, sessionId: run.session_id, attempts },
    });
  }
  return { inputs, skipped };
}
