/**
 * The agent-harness reporter end to end: runs fixtures/vitest-project (plugin + reporter, fake agent meta, no
 * engine) in a child Vitest, then checks consistency.json/.md, junit.xml, the step summary, and the sharded
 * path (blob shards + --merge-reports).
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConsistencyReportSchema, type ConsistencyReport } from '../../src/report/schema.js';
import { buildConsistencyReport, caseName, engineFromName } from '../../src/report/build.js';
import { renderJunit, renderMarkdown, xmlEscape } from '../../src/report/render.js';
import { scaled } from '../helpers/load-scaled.js';
import { testErrorMessages } from '../../src/vitest/reporter.js';
import type { SerializedError } from 'vitest/node';
import { VITEST, childVitestEnv } from '../helpers/child-vitest.js';

const REPO = path.resolve(import.meta.dirname, '..', '..');
const PROJECT = path.join('fixtures', 'vitest-project');
let tmp: string;

function runVitest(args: string[], extra: Record<string, string>): { status: number | null; output: string } {
  const result = spawnSync(process.execPath, [VITEST, 'run', '--root', PROJECT, ...args], {
    cwd: REPO,
    env: childVitestEnv(extra),
    encoding: 'utf8',
    timeout: scaled(120_000),
  });
  return { status: result.status, output: `${result.stdout}\n${result.stderr}` };
}

function readReport(dir: string): ConsistencyReport {
  return ConsistencyReportSchema.parse(JSON.parse(fs.readFileSync(path.join(dir, 'consistency.json'), 'utf8')));
}

const EXPECTED_TESTS = [
  'codex > answers a question',
  'codex > writes a file',
  'flaky codex case',
  'iflow > answers a question',
  'iflow > writes a file',
  'plain test without an agent',
  'plugin config is provided and the fixtures resolve',
];

beforeAll(() => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'ah-vitest-reporter-'));
});

afterAll(() => {
  fs.rmSync(tmp, { recursive: true, force: true });
});

describe('AgentHarnessReporter in a child Vitest run', () => {
  it('writes consistency.json, consistency.md, junit.xml and the step summary', { timeout: scaled(120_000) }, () => {
    const reportDir = path.join(tmp, 'single');
    const summary = path.join(tmp, 'summary.md');
    fs.writeFileSync(summary, '# before\n');
    const { status, output } = runVitest([], { AH_FIXTURE_REPORT_DIR: reportDir, GITHUB_STEP_SUMMARY: summary });
    expect(status, output).toBe(1); // "iflow > writes a file" fails on purpose
    const report = readReport(reportDir);
    expect(report.tests.map((t) => t.fullName).sort()).toEqual(EXPECTED_TESTS);
    expect(report.summary).toMatchObject({ total: 7, passed: 6, failed: 1, flaky: 1, disagreements: 1 });
    const flaky = report.tests.find((t) => t.name === 'flaky codex case')!;
    expect(flaky).toMatchObject({
      state: 'passed',
      flaky: true,
      retryCount: 1,
      engine: 'codex',
      runId: 'run-flaky',
      toolCalls: 3,
      diagnostics: 2,
    });
    const plain = report.tests.find((t) => t.name === 'plain test without an agent')!;
    expect(plain).toMatchObject({ engine: null, runId: null, auditDir: null, completion: null });
    expect(plain.toolCalls).toBeUndefined();
    const failed = report.tests.find((t) => t.fullName === 'iflow > writes a file')!;
    expect(failed.errors[0]).toContain('iflow did not write the file');

    const byCase = Object.fromEntries(report.matrix.map((row) => [row.case, row]));
    expect(Object.keys(byCase).sort()).toEqual(['answers a question', 'writes a file']);
    expect(byCase['writes a file']).toMatchObject({
      disagree: true,
      engines: { codex: { outcome: 'passed' }, iflow: { outcome: 'failed', completion: 'failed' } },
    });
    expect(byCase['answers a question']!.disagree).toBe(false);

    const md = fs.readFileSync(path.join(reportDir, 'consistency.md'), 'utf8');
    expect(md).toMatch(/\| writes a file \|.*\| ⚠ passed \(completed\): codex; failed \(failed\): iflow \|/);
    expect(md).toContain('**❌ iflow > writes a file**: iflow did not write the file');
    expect(md).toContain('| case | codex | iflow | agreement |');
    expect(md).not.toMatch(/\| answers a question \|.*⚠/);
    expect(md).toContain('## Engine matrix');

    const junit = fs.readFileSync(path.join(reportDir, 'junit.xml'), 'utf8');
    expect(junit).toContain('<testsuites name="agent-harness" tests="7" failures="1"');
    expect(junit).toContain('<testcase classname="tests/matrix.fixture.test.ts" name="iflow &gt; writes a file"');
    expect(junit).toContain('<property name="engine" value="iflow"/>');
    expect(junit).toContain('<property name="run_id" value="run-iflow"/>');
    expect(junit).toContain('<property name="audit_dir" value="/tmp/fake/run-iflow/.audit &amp; &lt;x&gt;"/>');
    expect(junit).toMatch(/<failure message="[^"]*iflow did not write the file[^"]*"/);
    expect(junit.match(/<testcase /g)).toHaveLength(7);

    // The HTML report beside them, with its history (one report so far) and index; the data escaped in the page.
    const html = fs.readFileSync(path.join(reportDir, 'report.html'), 'utf8');
    expect(html).toContain('codex \\u003e answers a question');
    expect(html).toContain("script-src 'sha256-");
    expect(fs.readdirSync(path.join(reportDir, 'history'))).toHaveLength(1);
    expect(fs.readFileSync(path.join(reportDir, 'index.html'), 'utf8')).toContain('href="history/');

    const step = fs.readFileSync(summary, 'utf8');
    expect(step.startsWith('# before\n')).toBe(true);
    expect(step).toContain('### agent-harness');
    expect(step).toContain('⚠ passed (completed): codex; failed (failed): iflow');
  });

  it('builds the full report after sharded blob runs and --merge-reports', { timeout: scaled(180_000) }, () => {
    const blobs = path.join(tmp, 'blobs');
    const shardReports = path.join(tmp, 'shard-reports');
    for (const shard of ['1/2', '2/2']) {
      const out = path.join(blobs, `blob-${shard.replace('/', '-')}.json`);
      const { output } = runVitest(['--reporter=blob', `--shard=${shard}`, `--outputFile=${out}`], {
        AH_FIXTURE_REPORT_DIR: shardReports,
      });
      expect(fs.existsSync(out), output).toBe(true);
    }
    // The plugin does not register the reporter in blob runs: reports come from the merge only.
    expect(fs.existsSync(shardReports)).toBe(false);
    const merged = path.join(tmp, 'merged');
    const { status, output } = runVitest([`--merge-reports=${blobs}`], { AH_FIXTURE_REPORT_DIR: merged });
    expect(status, output).toBe(1);
    const report = readReport(merged);
    expect(report.tests.map((t) => t.fullName).sort()).toEqual(EXPECTED_TESTS);
    expect(report.tests.find((t) => t.name === 'flaky codex case')).toMatchObject({
      flaky: true,
      retryCount: 1,
      runId: 'run-flaky',
    });
    expect(report.matrix.find((row) => row.case === 'writes a file')?.disagree).toBe(true);
    expect(fs.readFileSync(path.join(merged, 'junit.xml'), 'utf8')).toContain(
      '<property name="engine" value="codex"/>',
    );
  });
});

describe('report building', () => {
  it('strips the engine from case names in every common position', () => {
    expect(caseName('codex > writes a file', 'codex')).toBe('writes a file');
    expect(caseName('suite > writes a file [codex]', 'codex')).toBe('suite > writes a file');
    expect(caseName('writes a file (iflow)', 'iflow')).toBe('writes a file');
    expect(caseName('codex: writes a file', 'codex')).toBe('writes a file');
    expect(caseName('writes a file - iflow', 'iflow')).toBe('writes a file');
    expect(caseName('hello-file on codex > passes', 'codex')).toBe('hello-file > passes');
    expect(caseName('runs it in claude', 'claude')).toBe('runs it');
    expect(caseName('codex engine (real binary) > starts', 'codex')).toBe('engine (real binary) > starts');
    expect(engineFromName('matrix > claude > x')).toBe('claude');
    expect(engineFromName('no engine here')).toBeNull();
  });

  it('ignores skipped engines for disagreement and escapes XML', () => {
    const base = {
      project: 'p',
      file: 'f.test.ts',
      durationMs: 1,
      retryCount: 0,
      flaky: false,
      errors: [],
      meta: undefined,
    };
    const report = buildConsistencyReport(
      [
        { ...base, id: '1', name: 'x', fullName: 'codex > x', state: 'passed' },
        { ...base, id: '2', name: 'x', fullName: 'iflow > x', state: 'skipped' },
        {
          ...base,
          id: '3',
          name: 'y "<&>"',
          fullName: 'codex > y "<&>"',
          state: 'failed',
          errors: ['bad <tag> & "quote"\u0001'],
        },
      ],
      'failed',
    );
    expect(report.matrix).toHaveLength(1);
    expect(report.matrix[0]).toMatchObject({ case: 'x', disagree: false });
    const xml = renderJunit(report);
    expect(xml).toContain('name="codex &gt; y &quot;&lt;&amp;&gt;&quot;"');
    expect(xml).toContain('message="bad &lt;tag&gt; &amp; &quot;quote&quot;"');
    expect(xml).toContain('<skipped/>');
    expect(xmlEscape("a'b")).toBe('a&apos;b');
  });
});

describe('report building across engine versions', () => {
  const meta = (engine: string, version: string | null, state: string) => ({
    engine,
    runId: `r-${engine}-${version}`,
    handle: 'h',
    sessionId: null,
    attempts: [
      {
        runId: `r-${engine}-${version}`,
        attempt: 1,
        launch: 'start' as const,
        exitCode: 0,
        completion: { state, reason: state === 'completed' ? 'done_marker' : 'turn_failed' },
        fcmpCounts: {},
        auditDir: `/runs/r-${engine}-${version}/.audit`,
        durationMs: 1,
        usage: null,
        toolCalls: 1,
        retry: 0,
        engineVersion: version,
      },
    ],
  });
  const input = (id: string, engine: string, version: string | null, state: 'passed' | 'failed') => ({
    id,
    name: 'writes a file',
    fullName: `${engine} > writes a file`,
    project: 'engine',
    file: 'm.test.ts',
    state,
    durationMs: 1,
    retryCount: 0,
    flaky: false,
    errors: [],
    meta: meta(engine, version, state === 'passed' ? 'completed' : 'failed'),
  });

  it('compares one case across two versions of an engine as across engines: a column per version, disagreement kept', () => {
    // Merged reports of the pinned claude and the newest one (npm run test:engines -- --latest), and one codex.
    const report = buildConsistencyReport(
      [
        input('1', 'claude', '2.1.197', 'passed'),
        input('2', 'claude', '2.1.332', 'failed'),
        input('3', 'codex', '0.169.0', 'passed'),
      ],
      'failed',
    );
    expect(report.matrix).toHaveLength(1);
    expect(Object.keys(report.matrix[0]!.engines).sort()).toEqual(['claude@2.1.197', 'claude@2.1.332', 'codex']);
    expect(report.matrix[0]).toMatchObject({ case: 'writes a file', disagree: true });
    expect(renderMarkdown(report)).toContain('claude@2.1.332');
    // One engine alone, in two versions, is a comparison too.
    const alone = buildConsistencyReport(
      [input('1', 'claude', '2.1.197', 'passed'), input('2', 'claude', '2.1.332', 'passed')],
      'passed',
    );
    expect(alone.matrix.map((row) => Object.keys(row.engines).sort())).toEqual([['claude@2.1.197', 'claude@2.1.332']]);
  });

  it('keeps plain engine columns when each engine ran one version (or none is known)', () => {
    const report = buildConsistencyReport(
      [
        input('1', 'claude', '2.1.197', 'passed'),
        input('2', 'codex', null, 'passed'),
        input('3', 'codex', null, 'passed'),
      ],
      'passed',
    );
    expect(Object.keys(report.matrix[0]!.engines).sort()).toEqual(['claude', 'codex']);
  });
});

describe('testErrorMessages', () => {
  it('puts failed expectations first, otherwise keeps the order', () => {
    const thrown = { name: 'Error', message: 'cleanup broke' };
    const first = { name: 'AssertionError', message: 'expected 1 to be 2', expected: '2', actual: '1' };
    const soft = {
      name: 'Error',
      message: 'expected the agent to have completed',
      expected: 'completed',
      actual: 'failed',
    };
    expect(testErrorMessages([thrown, first, soft] as SerializedError[])).toEqual([
      'expected 1 to be 2',
      'expected the agent to have completed',
      'cleanup broke',
    ]);
  });
});
