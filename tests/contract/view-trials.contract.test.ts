/**
 * `agent-harness view --report FILE`: the run directories carry no trial records, so the viewer takes a test run's
 * consistency.json; its page then has the Trials section (the strip, the failed trial's link to its run page with
 * its cause, the interval) and `GET /api/v1/statistics` returns the section. Without `--report` there is none; a file
 * that is no report is a USAGE_ERROR naming it.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { summarizeTrials } from '../../src/evals/summarize.js';
import type { TrialRecord } from '../../src/evals/trial-record.js';
import { type StatisticsSection, STATISTICS_VERSION } from '../../src/report/statistics.js';
import { startViewServer } from '../../src/report/view-server.js';
import { createCliSandbox, runCliProcess } from '../helpers/cli.js';

const root = fs.mkdtempSync(path.join(os.tmpdir(), 'ah-view-trials-'));
afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

const base = { case: 'greets', engine: 'codex', arm: 'with-skill' as const, seed: 0, infraRetries: 0 };
const record = (trial: number, passed: boolean): TrialRecord => ({
  ...base,
  trial,
  outcome: passed ? 'passed' : 'failed',
  ...(passed ? {} : { failureClass: 'task' as const, reason: 'expected hello.txt to change' }),
  runId: `run-${trial}`,
  handle: `h${trial}`,
  auditDir: `/runs/${trial}/.audit`,
  durationMs: 1,
  tokens: null,
  costUsd: null,
});
const statistics = {
  version: STATISTICS_VERSION,
  interval: 'wilson',
  confidence: 0.95,
  rows: summarizeTrials([record(0, true), record(1, false), record(2, true)]),
} as StatisticsSection;

async function get(url: URL, pathname: string): Promise<{ status: number; body: string }> {
  const target = new URL(pathname, url);
  target.searchParams.set('token', url.searchParams.get('token')!);
  const response = await fetch(target);
  return { status: response.status, body: await response.text() };
}

describe('view --report: the Trials section', () => {
  it('the page shows the strip with the failed trial linked to its run; the API returns the statistics', async () => {
    const server = await startViewServer({ runRoot: root, statistics });
    try {
      const url = new URL(server.url);
      const page = await get(url, '/');
      expect(page.status).toBe(200);
      expect(page.body).toContain('data-testid="trial-strip"');
      expect(page.body).toMatch(
        /<a class="trial trial-fail" data-testid="trial-link" href="#run=h1" title="trial 2: failed, task: expected hello.txt to change">/,
      );
      expect(page.body).toContain(`66.7% [${(statistics.rows[0]!.ci95[0] * 100).toFixed(1)}%`);
      const api = await get(url, '/api/v1/statistics');
      expect(api.status).toBe(200);
      expect(JSON.parse(api.body).statistics).toEqual(statistics);
    } finally {
      await server.close();
    }
    const bare = await startViewServer({ runRoot: root });
    try {
      const url = new URL(bare.url);
      expect((await get(url, '/')).body).not.toContain('data-testid="trial-strip"');
      expect(JSON.parse((await get(url, '/api/v1/statistics')).body).statistics).toBeNull();
    } finally {
      await bare.close();
    }
  });

  it('a --report that is no consistency report is a USAGE_ERROR naming the file', () => {
    const sandbox = createCliSandbox();
    try {
      const file = path.join(sandbox.root, 'not-a-report.json');
      fs.writeFileSync(file, '{"hello": 1}');
      const run = runCliProcess(sandbox, ['view', '--root', root, '--report', file]);
      expect(run.status).toBe(2);
      expect(run.stderr).toContain('USAGE_ERROR');
      expect(run.stderr).toContain(`--report ${JSON.stringify(file)} is not a consistency report`);
    } finally {
      sandbox.cleanup();
    }
  });
});
