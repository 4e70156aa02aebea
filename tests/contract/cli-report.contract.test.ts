/**
 * `agent-harness report`: conformance reports of shell runs → consistency.json/md, and `--baseline` exits 1 on a
 * regression, naming what changed. Real CLI subprocess; the engine is a fake codex replaying recorded streams.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConsistencyReportSchema } from '../../src/vitest/report-schema.js';
import { createCliSandbox, installFakeEngine, REPO, runCliProcess, type CliSandbox } from '../helpers/cli.js';

const streams = path.join(REPO, 'fixtures', 'streams', 'codex');
let sandbox: CliSandbox;

beforeAll(() => {
  sandbox = createCliSandbox();
});
afterAll(() => sandbox.cleanup());

function readReport(dir: string) {
  return ConsistencyReportSchema.parse(JSON.parse(fs.readFileSync(path.join(dir, 'consistency.json'), 'utf8')));
}

describe('agent-harness report', () => {
  it('aggregates a run, then --baseline fails when the tool-call count of the same case changes', () => {
    installFakeEngine(sandbox, 'codex', { stdoutFile: path.join(streams, 'done-marker.stdout.jsonl') });
    const first = runCliProcess(sandbox, ['start', '--prompt', 'go', 'codex']);
    expect(first.status, first.stderr).toBe(0);

    const baselineDir = path.join(sandbox.root, 'base');
    const made = runCliProcess(sandbox, ['report', '--out', baselineDir]);
    expect(made.status, made.stderr).toBe(0);
    const baseline = readReport(baselineDir);
    expect(baseline.tests).toHaveLength(1);
    expect(baseline.tests[0]).toMatchObject({ engine: 'codex', name: 'no script #1', state: 'passed' });
    const before = baseline.tests[0]!.toolCalls ?? 0;
    expect(before).toBeGreaterThan(0);
    expect(fs.readFileSync(path.join(baselineDir, 'consistency.md'), 'utf8')).toContain('no script #1');

    // The same report against itself is no regression.
    const same = runCliProcess(sandbox, ['report', '--out', path.join(sandbox.root, 'same'), '--baseline', path.join(baselineDir, 'consistency.json')]);
    expect(same.status, same.stderr).toBe(0);
    expect(same.stderr).toContain('no regression');

    // The engine now makes no tool call for the same case.
    installFakeEngine(sandbox, 'codex', { stdoutFile: path.join(streams, 'noise.stdout.jsonl') });
    const second = runCliProcess(sandbox, ['start', '--prompt', 'go', 'codex']);
    expect(second.status, second.stderr).toBe(0);
    const regressed = runCliProcess(sandbox, ['report', '--out', path.join(sandbox.root, 'now'), '--baseline', path.join(baselineDir, 'consistency.json')]);
    expect(regressed.status).toBe(1);
    expect(regressed.stdout).toContain(`codex / no script #1: tool calls ${before} → 0`);
    expect(regressed.stderr).toMatch(/\d+ regression\(s\)/);
    expect(readReport(path.join(sandbox.root, 'now')).tests).toHaveLength(2);
  });

  it('a baseline that is not a consistency.json is CONFIG_INVALID, exit 2', () => {
    const bad = path.join(sandbox.root, 'bad.json');
    fs.writeFileSync(bad, '{"version":"nope"}');
    const run = runCliProcess(sandbox, ['report', '--baseline', bad, '--out', path.join(sandbox.root, 'x')]);
    expect(run.status).toBe(2);
    expect(run.stderr).toContain('agent-harness: error CONFIG_INVALID: ');
  });

  it('--help teaches the case naming and the baseline workflow', () => {
    const run = runCliProcess(sandbox, ['report', '--help']);
    expect(run.status).toBe(0);
    expect(run.stdout).toContain('--baseline <file>');
    expect(run.stdout).toContain('<script basename> #<attempt>');
  });
});
