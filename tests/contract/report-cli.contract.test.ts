/**
 * `agent-harness report`: CLI runs aggregated into consistency.json/md from their conformance reports (the same
 * format the Vitest reporter writes), one matrix row per prompt across engines, and `--baseline` failing on a
 * changed tool-call count. Fake engines replay recorded streams; no engine process runs.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseSince } from '../../src/cli/report.js';
import { ConsistencyReportSchema } from '../../src/report/schema.js';
import { createCliSandbox, installFakeEngine, REPO, runCliProcess, type CliSandbox } from '../helpers/cli.js';

const STREAMS = path.join(REPO, 'fixtures', 'streams');
let sandbox: CliSandbox;
beforeAll(() => {
  sandbox = createCliSandbox();
});
afterAll(() => sandbox.cleanup());

function handleOf(stderr: string): string {
  return /^Run handle: ([0-9a-f]{8})$/m.exec(stderr)![1]!;
}

function startBoth(codexStream: string): string[] {
  installFakeEngine(sandbox, 'codex', { stdoutFile: path.join(STREAMS, 'codex', codexStream) });
  installFakeEngine(sandbox, 'claude', { stdoutFile: path.join(STREAMS, 'claude', 'turn1.stdout.jsonl') });
  return ['codex', 'claude'].map((engine) =>
    handleOf(runCliProcess(sandbox, ['start', '--prompt', 'Write out.txt.', engine]).stderr),
  );
}

describe('agent-harness report', () => {
  it('aggregates runs into consistency.json/md with a matrix row per prompt, then fails a baseline on a changed tool-call count', () => {
    const first = startBoth('turn1.stdout.jsonl');
    const out = path.join(sandbox.root, 'report-1');
    const ok = runCliProcess(sandbox, ['report', ...first, '--out', out]);
    expect(ok.status).toBe(0);
    const report = ConsistencyReportSchema.parse(
      JSON.parse(fs.readFileSync(path.join(out, 'consistency.json'), 'utf8')),
    );
    expect(report.tests.map((t) => t.engine).sort()).toEqual(['claude', 'codex']);
    expect(report.matrix).toHaveLength(1);
    expect(report.matrix[0]).toMatchObject({ case: 'Write out.txt.' });
    expect(Object.keys(report.matrix[0]!.engines).sort()).toEqual(['claude', 'codex']);
    expect(report.tests.find((t) => t.engine === 'codex')?.toolCalls).toBe(1);
    expect(fs.readFileSync(path.join(out, 'consistency.md'), 'utf8')).toContain('## Engine matrix');

    // Same runs against their own report: no regression.
    const same = runCliProcess(sandbox, [
      'report',
      ...first,
      '--out',
      path.join(sandbox.root, 'report-same'),
      '--baseline',
      path.join(out, 'consistency.json'),
    ]);
    expect(same.status).toBe(0);
    expect(same.stderr).toContain('No regression');

    // A codex release that now makes no tool call for the same prompt: a regression, exit 1, saying what changed.
    const second = startBoth('multibyte.stdout.jsonl');
    const changed = runCliProcess(sandbox, [
      'report',
      ...second,
      '--out',
      path.join(sandbox.root, 'report-2'),
      '--baseline',
      path.join(out, 'consistency.json'),
    ]);
    expect(changed.stdout).toContain('REGRESSION: codex · Write out.txt.: tool calls 1 → 0');
    expect(changed.stdout).not.toMatch(/REGRESSION: claude/);
    expect(changed.status).toBe(1);
  });

  it('--since filters by creation time; a bad value or baseline is a clear error', () => {
    expect(parseSince('2h', new Date('2026-01-01T12:00:00Z')).toISOString()).toBe('2026-01-01T10:00:00.000Z');
    expect(parseSince('2026-01-01T00:00:00Z').toISOString()).toBe('2026-01-01T00:00:00.000Z');
    const bad = runCliProcess(sandbox, ['report', '--since', 'yesterday-ish']);
    expect(bad.status).toBe(2);
    expect(bad.stderr).toContain('--since takes a duration');
    const none = runCliProcess(sandbox, [
      'report',
      '--since',
      '2999-01-01T00:00:00Z',
      '--out',
      path.join(sandbox.root, 'report-none'),
    ]);
    expect(none.status).toBe(0);
    expect(none.stderr).toMatch(/^0 run\(s\)/);
    fs.writeFileSync(path.join(sandbox.root, 'not-a-report.json'), '{"x":1}');
    const baseline = runCliProcess(sandbox, [
      'report',
      '--out',
      path.join(sandbox.root, 'report-3'),
      '--baseline',
      path.join(sandbox.root, 'not-a-report.json'),
    ]);
    expect(baseline.status).toBe(2);
    expect(baseline.stderr).toContain('CONFIG_INVALID');
  });

  it('names a run directory whose run.json cannot be read instead of leaving it out silently', () => {
    installFakeEngine(sandbox, 'codex', { stdoutFile: path.join(STREAMS, 'codex', 'turn1.stdout.jsonl') });
    const start = runCliProcess(sandbox, ['start', '--prompt', 'Broken later.', 'codex']);
    const runDir = /^Run directory: (.+)$/m.exec(start.stderr)![1]!;
    const record = path.join(runDir, '.audit', 'run.json');
    const saved = fs.readFileSync(record);
    fs.writeFileSync(record, saved.subarray(0, 40));
    try {
      const report = runCliProcess(sandbox, ['report', '--out', path.join(sandbox.root, 'report-broken')]);
      expect(report.status, report.stderr).toBe(0);
      expect(report.stderr).toContain(`agent-harness: warning: skipped run directory ${runDir}: `);
      expect(report.stderr).toContain('is not valid JSON');
      expect(fs.readFileSync(record)).toEqual(saved.subarray(0, 40));
    } finally {
      fs.writeFileSync(record, saved);
    }
  });
});
