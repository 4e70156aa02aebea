/**
 * AgentHarnessReporter: writes consistency.json, consistency.md, junit.xml and report.html into the report directory at
 * the end of the run, and appends a summary to `$GITHUB_STEP_SUMMARY` when set. Everything is built in
 * `onTestRunEnd` from `testCase.meta()/result()/diagnostic()`, so it works the same after `--merge-reports`.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Reporter, SerializedError, TestCase, TestModule, TestRunEndReason, Vitest } from 'vitest/node';
import * as z from 'zod';
import { AgentHarnessError } from '../errors/index.js';
import { buildConsistencyReport, type ReportInput } from '../report/build.js';
import { writeHtmlReport } from '../report/html-history.js';
import type { ConsistencyReport } from '../report/schema.js';
import { renderJunit, renderMarkdown, renderStepSummary } from '../report/render.js';
import { DEFAULT_REPORT_DIR } from './options.js';
import { exportTestRuns, type ExportOptions } from './export-runs.js';
import type { ProgressHub } from './progress-channel.js';
import { startReporterProgress } from './reporter-progress.js';
import { readAgentHarnessMeta } from './types.js';
import { readAcpConformanceMeta } from '../report/acp-conformance.js';
import { readTrialRecords } from '../evals/trial-record.js';
import { renderStatisticsMarkdown, type StatisticsGates } from '../report/statistics.js';
import { readTriggerRecords } from './trials.js';

/** Marks reporter instances so the plugin can recognise one even when loaded from another module copy. */
export const AGENT_HARNESS_REPORTER = Symbol.for('agent-harness.reporter');

/** Options of {@link AgentHarnessReporter}. */
export interface AgentHarnessReporterOptions {
  /** Report directory (relative to the Vitest root). Default `reports/agent-harness`. */
  reportDir?: string;
  /** Append a summary to `$GITHUB_STEP_SUMMARY` when it is set (default true). */
  stepSummary?: boolean;
  /**
   * Write the HTML report too (default true): report.html, a copy in history/<timestamp>/ and index.html; see
   * docs/report.md.
   */
  html?: boolean;
  /** Export each test's attempts beside their audit: ATIF and/or OTLP (see `export-runs.ts`). */
  export?: ExportOptions;
  /** Live progress of the running attempts (the plugin's hub): printed while tests run. */
  progressHub?: ProgressHub;
  /** Gates over the run's trial statistics; one that fails fails the run (the plugin's `gates`; docs/evals.md). */
  gates?: StatisticsGates;
}

/** The reporter options' types (unknown keys are left alone). */
const ReporterOptionsSchema = z.object({
  reportDir: z.string().min(1).optional(),
  stepSummary: z.boolean().optional(),
  html: z.boolean().optional(),
  export: z.strictObject({ atif: z.boolean().optional(), otlp: z.boolean().optional() }).optional(),
  progressHub: z.unknown().optional(),
  gates: z.record(z.string(), z.unknown()).optional(),
});

/**
 * Checks the reporter's options when it is made: CONFIG_INVALID naming the option and its value, not a TypeError
 * at the end of the run (`reportDir: 5`) or a truthy string taken for `true` (`html: 'no'`).
 */
function checkReporterOptions(options: AgentHarnessReporterOptions): AgentHarnessReporterOptions {
  const result = ReporterOptionsSchema.safeParse(options);
  if (result.success) return options;
  const issue = result.error.issues[0]!;
  let value: unknown = options;
  for (const key of issue.path)
    value =
      value && typeof value === 'object' ? (value as Record<PropertyKey, unknown>)[key as PropertyKey] : undefined;
  const field = issue.path.length > 0 ? issue.path.map(String).join('.') : '(options)';
  throw new AgentHarnessError(
    'CONFIG_INVALID',
    `AgentHarnessReporter option ${field} = ${JSON.stringify(value) ?? String(value)} is invalid: ${issue.message}`,
    { details: { field } },
  );
}

/** Files written by one run of the reporter. */
export interface AgentHarnessReportFiles {
  json: string;
  markdown: string;
  junit: string;
  /** report.html (absent when `html: false` or when it could not be written). */
  html?: string;
}

/** True for a failed `expect` (an assertion with expected/actual), as opposed to an error the test threw. */
function isFailedExpectation(error: SerializedError): boolean {
  return error.name === 'AssertionError' || 'expected' in error || 'actual' in error;
}

/**
 * The messages of a test's errors, failed expectations first (stable otherwise): the report shows the first one
 * beside the run, and it should say what the test expected, not that a later cleanup threw.
 */
export function testErrorMessages(errors: readonly SerializedError[]): string[] {
  return [...errors]
    .sort((a, b) => Number(isFailedExpectation(b)) - Number(isFailedExpectation(a)))
    .map((e) => String(e.message ?? e.name ?? 'error'));
}

/** Converts one Vitest test case into the reporter's plain record. */
export function testCaseToReportInput(tc: TestCase, root: string): ReportInput {
  const result = tc.result();
  const diagnostic = tc.diagnostic();
  const errors = testErrorMessages(result.errors ?? []);
  return {
    id: tc.id,
    name: tc.name,
    fullName: tc.fullName,
    project: tc.project.name ?? '',
    file: path.relative(root, tc.module.moduleId).split(path.sep).join('/'),
    state: result.state,
    durationMs: diagnostic?.duration ?? 0,
    retryCount: diagnostic?.retryCount ?? 0,
    flaky: diagnostic?.flaky ?? false,
    errors: result.state === 'passed' ? [] : errors,
    meta: readAgentHarnessMeta(tc.meta()),
    acp: readAcpConformanceMeta(tc.meta()),
    trials: readTrialRecords(tc.meta()),
    triggers: readTriggerRecords(tc.meta()),
    // The audit files the agent fixture attached (annotations survive --merge-reports; their paths point at
    // Vitest's attachments copy).
    attachments: tc
      .annotations()
      .filter((a) => a.type === 'agent-harness:audit' && a.attachment?.path)
      .map((a) => a.attachment!.path!),
  };
}

/** The Vitest reporter of agent-harness (register it through the `agentHarness()` plugin or `reporters`). */
export class AgentHarnessReporter implements Reporter {
  /** Brand checked by the plugin's double-registration guard. */
  readonly [AGENT_HARNESS_REPORTER] = true;
  /** Options as given. */
  readonly options: AgentHarnessReporterOptions;
  private root = process.cwd();
  /** The report of the last run (for programmatic use). */
  lastReport: ConsistencyReport | null = null;
  /** Files of the last run. */
  lastFiles: AgentHarnessReportFiles | null = null;
  /** Export files written by the last run (`export` option). */
  lastExports: string[] = [];

  /** Creates the reporter. */
  constructor(options: AgentHarnessReporterOptions = {}) {
    this.options = checkReporterOptions(options ?? {});
  }

  private stopProgress: (() => void) | null = null;

  /** Remembers the Vitest root (report paths and test files are relative to it). */
  onInit(vitest: Vitest): void {
    this.root = vitest.config.root;
    this.onTestRunStart();
  }

  /** Starts the progress lines of the running attempts (with the plugin's hub). */
  onTestRunStart(): void {
    if (this.options.progressHub && !this.stopProgress)
      this.stopProgress = startReporterProgress(this.options.progressHub);
  }

  /** Builds and writes every report file (and the per-test exports, when asked for). */
  async onTestRunEnd(
    testModules: ReadonlyArray<TestModule>,
    _unhandledErrors: ReadonlyArray<SerializedError>,
    reason: TestRunEndReason,
  ): Promise<void> {
    this.stopProgress?.();
    this.stopProgress = null;
    const inputs: ReportInput[] = [];
    for (const mod of testModules)
      for (const tc of mod.children.allTests()) inputs.push(testCaseToReportInput(tc, this.root));
    const report = buildConsistencyReport(inputs, reason, new Date(), this.options.gates ?? {});
    const dir = path.resolve(this.root, this.options.reportDir ?? DEFAULT_REPORT_DIR);
    fs.mkdirSync(dir, { recursive: true });
    const files: AgentHarnessReportFiles = {
      json: path.join(dir, 'consistency.json'),
      markdown: path.join(dir, 'consistency.md'),
      junit: path.join(dir, 'junit.xml'),
    };
    fs.writeFileSync(files.json, `${JSON.stringify(report, null, 2)}\n`);
    const statistics = renderStatisticsMarkdown(report.statistics);
    fs.writeFileSync(files.markdown, renderMarkdown(report) + statistics);
    fs.writeFileSync(files.junit, renderJunit(report));
    if (this.options.html !== false) {
      try {
        files.html = writeHtmlReport(dir, report).html;
      } catch (error) {
        // The JSON, Markdown and JUnit reports are written; a failed HTML report is said, never fails the run.
        process.stderr.write(`agent-harness reporter: the HTML report was not written: ${(error as Error).message}\n`);
      }
    }
    const summary = process.env.GITHUB_STEP_SUMMARY;
    if (summary && this.options.stepSummary !== false) {
      try {
        fs.appendFileSync(summary, renderStepSummary(report) + statistics);
      } catch {
        // A missing step summary file must not fail the test run.
      }
    }
    this.lastReport = report;
    this.lastFiles = files;
    // A failed gate fails the run (Vitest keeps an exit code already set to 1), saying which case, engine and bound.
    const failedGates = (report.statistics?.gates ?? []).filter((gate) => !gate.pass);
    for (const gate of failedGates) process.stderr.write(`agent-harness: gate ${gate.gate} failed: ${gate.message}\n`);
    if (failedGates.length > 0) process.exitCode = 1;
    if (this.options.export) {
      const exported = await exportTestRuns(testModules, this.options.export);
      for (const warning of exported.warnings) process.stderr.write(`agent-harness: export: ${warning}\n`);
      this.lastExports = exported.files;
    }
  }
}

export default AgentHarnessReporter;
