/**
 * Collects the conformance reports of runs into the consistency report the Vitest reporter writes, so a shell
 * user or a service gets the same consistency.json/md without Vitest. One test per run attempt; its case is the
 * run's model script (basename) and attempt number, so the same case lines up across engines and re-runs.
 */
import fs from 'node:fs';
import path from 'node:path';
import { attemptAuditPaths } from '../core/audit-files.js';
import { ConformanceReportSchema, type RunIndexEntry } from '../protocol/index.js';
import { buildConsistencyReport, type ReportInput } from '../vitest/report-build.js';
import type { ConsistencyReport } from '../vitest/report-schema.js';

/** The case name of a run's attempt: what lines it up with the same case on another engine or a later run. */
export function caseOfRun(run: RunIndexEntry, attempt: number): string {
  return `${run.script ? path.basename(run.script) : 'no script'} #${attempt}`;
}

/** Reads every attempt's conformance report of `runs`; attempts without one (still running, killed) are skipped. */
export function collectReportInputs(runs: readonly RunIndexEntry[]): ReportInput[] {
  const inputs: ReportInput[] = [];
  for (const run of runs) {
    for (let attempt = 1; attempt <= run.attempts; attempt += 1) {
      const file = attemptAuditPaths(run.run_dir, attempt).conformance;
      if (!fs.existsSync(file)) continue;
      const report = ConformanceReportSchema.parse(JSON.parse(fs.readFileSync(file, 'utf8')));
      const name = caseOfRun(run, attempt);
      inputs.push({
        id: `${run.run_id}#${attempt}`,
        name,
        fullName: `${name} > ${run.engine}`,
        project: 'runs',
        // One file for all runs, so the same case on two engines forms one matrix row (the run dir is the audit dir).
        file: 'agent-harness runs',
        state: report.completion.state === 'completed' ? 'passed' : 'failed',
        durationMs: report.metrics.duration_ms ?? 0,
        retryCount: 0,
        flaky: false,
        errors: report.completion.state === 'completed' ? [] : [`${report.completion.state} (${report.completion.reason})`],
        meta: {
          engine: run.engine,
          runId: run.run_id,
          handle: run.handle,
          sessionId: run.session_id,
          attempts: [{
            runId: run.run_id, attempt, launch: report.launch === 'resume' ? 'resume' : 'start', exitCode: null,
            completion: { state: report.completion.state, reason: report.completion.reason },
            fcmpCounts: { ...report.fcmp_counts, 'diagnostic.warning': report.diagnostics.length } as Record<string, number>,
            auditDir: path.dirname(file), durationMs: report.metrics.duration_ms ?? 0, usage: report.metrics.usage,
            toolCalls: report.tool_call_count, retry: 0,
          }],
        },
        attachments: [file],
      });
    }
  }
  return inputs;
}

/** Builds the consistency report of `runs`. */
export function buildRunsReport(runs: readonly RunIndexEntry[], reason: string): ConsistencyReport {
  return buildConsistencyReport(collectReportInputs(runs), reason);
}
