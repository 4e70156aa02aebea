/**
 * The statistics section of the report end to end (issue 45 items 5 and 7): fixtures/vitest-evals-project writes trial
 * records from two files; the reporter's consistency.json holds the versioned statistics, consistency.md the table, and
 * the plugin's pass-rate gate fails the run naming case, engine and bound. Run as two shards (blob reporter) and merged
 * with --merge-reports, the statistics equal the unsharded run's.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConsistencyReportSchema, type ConsistencyReport } from '../../src/report/schema.js';
import { scaled } from '../helpers/load-scaled.js';
import { VITEST, childVitestEnv } from '../helpers/child-vitest.js';

const REPO = path.resolve(import.meta.dirname, '..', '..');
const PROJECT = path.join('fixtures', 'vitest-evals-project');
let tmp: string;

function runVitest(args: string[], reportDir: string): { status: number | null; output: string } {
  const result = spawnSync(process.execPath, [VITEST, 'run', '--root', PROJECT, ...args], {
    cwd: REPO,
    env: childVitestEnv({ AH_FIXTURE_REPORT_DIR: reportDir }),
    encoding: 'utf8',
    timeout: scaled(120_000),
  });
  return { status: result.status, output: `${result.stdout}\n${result.stderr}` };
}

function readReport(dir: string): ConsistencyReport {
  return ConsistencyReportSchema.parse(JSON.parse(fs.readFileSync(path.join(dir, 'consistency.json'), 'utf8')));
}

beforeAll(() => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'ah-evals-report-'));
});
afterAll(() => {
  fs.rmSync(tmp, { recursive: true, force: true });
});

describe('trial statistics in the report', () => {
  let unsharded: ConsistencyReport;

  it('writes the statistics section and the table, and the gate fails the run naming case, engine and bound', {
    timeout: scaled(150_000),
  }, () => {
    const dir = path.join(tmp, 'whole');
    const { status, output } = runVitest([], dir);
    // Every test passed; the gate alone fails the run.
    expect(output).toMatch(/4 passed/);
    expect(status).toBe(1);
    expect(output).toMatch(
      /agent-harness: gate passRate failed: case "greets" on claude \(arm with-skill\): the lower bound of its 95\.0% Wilson interval is 38\.7% \(rate 60\.0%, 12\/20.*below the bound 60\.0%/,
    );
    expect(output).not.toMatch(/gate passRate failed: case "greets" on codex/);
    unsharded = readReport(dir);
    const stats = unsharded.statistics!;
    expect(stats.version).toBe('agent-harness.statistics/1');
    const codex = stats.rows.find((r) => r.engine === 'codex' && r.arm === 'with-skill')!;
    // 20 trials, one excluded as infrastructure: n = 19, 17 passed (trials 3 and 17 failed).
    expect(codex).toMatchObject({ n: 19, passed: 17, infra_failed: 1, infra_retries: 2, flaky: true });
    expect(codex.pass_rate).toBeCloseTo(17 / 19, 5);
    expect(codex.ci95[0]).toBeLessThan(17 / 19);
    expect(codex.ci95[1]).toBeGreaterThan(17 / 19);
    expect(Object.keys(codex.pass_at_k)).toEqual(['1', '5']);
    expect(codex.lift?.diff).toBeCloseTo(17 / 19 - 5 / 20, 5);
    expect(codex.failures.map((f) => [f.trial, f.failureClass])).toEqual([
      [3, 'task'],
      [15, 'infrastructure'],
      [17, 'task'],
    ]);
    expect(stats.gates?.filter((g) => !g.pass).map((g) => g.engine)).toEqual(['claude']);
    const md = fs.readFileSync(path.join(dir, 'consistency.md'), 'utf8');
    expect(md).toContain('## Trials');
    expect(md).toMatch(/\| greets \| codex \| with-skill \| 19 \| 17 \| 89\.5% \|/);
    expect(md).toContain('## Failed gates');
  });

  it('sharded and merged gives the same statistics', { timeout: scaled(300_000) }, () => {
    const blobs = path.join(tmp, 'blobs');
    const shardReports = path.join(tmp, 'shard-reports');
    for (const shard of ['1/2', '2/2']) {
      const out = path.join(blobs, `blob-${shard.replace('/', '-')}.json`);
      const { output } = runVitest(['--reporter=blob', `--shard=${shard}`, `--outputFile=${out}`], shardReports);
      expect(fs.existsSync(out), output).toBe(true);
    }
    const merged = path.join(tmp, 'merged');
    const { status } = runVitest([`--merge-reports=${blobs}`], merged);
    expect(status).toBe(1);
    expect(readReport(merged).statistics).toEqual(unsharded.statistics);
  });
});
