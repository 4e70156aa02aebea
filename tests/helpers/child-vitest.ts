/**
 * A child Vitest over a fixture project, as a user runs it: this run's environment without what belongs to this run
 * (Vitest's own variables, NODE_OPTIONS, the job summary, an OTLP endpoint, `AGENT_HARNESS_ENGINES`: the fixture names
 * its own engines), in CI mode without colour.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'vitest';
import { ConsistencyReportSchema, type ConsistencyReport } from '../../src/report/schema.js';
import { type CliSandbox, createCliSandbox, installFakeEngine, REPO } from './cli.js';
import { scaled } from './load-scaled.js';

/** Vitest's command, run by this Node. */
export const VITEST = path.join(REPO, 'node_modules', 'vitest', 'vitest.mjs');

/** Variables of this run a child Vitest must not inherit. */
const OWN_VARIABLES = [
  'TEST',
  'NODE_OPTIONS',
  'GITHUB_STEP_SUMMARY',
  'OTEL_EXPORTER_OTLP_ENDPOINT',
  'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT',
  'AGENT_HARNESS_ENGINES',
];

/** The environment of a child Vitest: this one's without {@link OWN_VARIABLES} and `VITEST*`, then `extra`. */
export function childVitestEnv(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env))
    if (!key.startsWith('VITEST') && !OWN_VARIABLES.includes(key)) env[key] = value;
  return { ...env, CI: 'true', NO_COLOR: '1', ...extra };
}

/** What {@link runReportProject} leaves: the sandbox (its `cleanup` is the caller's), the report directory and JSON. */
export interface ReportProjectRun {
  sandbox: CliSandbox;
  reportDir: string;
  report: ConsistencyReport;
}

/**
 * Runs fixture project `project` (relative to the repository) in a child Vitest with codex as a fake executable
 * replaying a stream that completes, its reports and runs in a new CLI sandbox; expects the child to exit `status` and
 * reads its consistency.json.
 */
export function runReportProject(project: string, status: number): ReportProjectRun {
  const sandbox = createCliSandbox();
  installFakeEngine(sandbox, 'codex', {
    stdoutFile: path.join(REPO, 'fixtures', 'streams', 'codex', 'file-change.stdout.jsonl'),
  });
  const reportDir = path.join(sandbox.root, 'reports');
  const child = spawnSync(process.execPath, [VITEST, 'run', '--root', project], {
    cwd: REPO,
    env: childVitestEnv({
      ...sandbox.env,
      PATH: process.env.PATH,
      AH_FIXTURE_REPORT_DIR: reportDir,
      AH_FIXTURE_RUN_ROOT: path.join(sandbox.root, 'runs'),
    }),
    encoding: 'utf8',
    timeout: scaled(180_000),
  });
  expect(child.status, `${child.stdout}\n${child.stderr}`).toBe(status);
  const report = ConsistencyReportSchema.parse(
    JSON.parse(fs.readFileSync(path.join(reportDir, 'consistency.json'), 'utf8')),
  );
  return { sandbox, reportDir, report };
}
