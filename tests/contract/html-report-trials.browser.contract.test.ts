/**
 * The Trials section of a one-engine project's report.html in a real browser (playwright-core driving the system's
 * Chromium): a child Vitest runs fixtures/vitest-trials-report-project, three trials of codex (a fake executable
 * replaying a stream that completes) whose second fails its check. The page shows the case's pass/fail strip, the
 * rate with its Wilson interval, and the failed trial as a link, titled with its classified cause, that opens its
 * run's page. Skipped, saying why, where Chromium or playwright-core is absent (outside CI: there it fails).
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConsistencyReportSchema, type ConsistencyReport } from '../../src/report/schema.js';
import { type BrowserHandle, browserUnavailable, launchBrowser } from '../helpers/browser.js';
import { type CliSandbox, createCliSandbox, installFakeEngine, REPO } from '../helpers/cli.js';
import { scaled } from '../helpers/load-scaled.js';

const VITEST = path.join(REPO, 'node_modules', 'vitest', 'vitest.mjs');
const PROJECT = path.join('fixtures', 'vitest-trials-report-project');
const unavailable = await browserUnavailable();
if (unavailable) console.warn(`html-report trials browser tests skipped: ${unavailable}`);

let sandbox: CliSandbox;
let browser: BrowserHandle;
let reportDir: string;
let report: ConsistencyReport;

function childEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env))
    if (!key.startsWith('VITEST') && key !== 'TEST' && key !== 'NODE_OPTIONS') env[key] = value;
  delete env.GITHUB_STEP_SUMMARY;
  return { ...env, ...sandbox.env, PATH: process.env.PATH, CI: 'true', NO_COLOR: '1', ...extra };
}

describe.skipIf(unavailable !== null && !process.env.CI)('the Trials section of report.html in Chromium', () => {
  beforeAll(async () => {
    sandbox = createCliSandbox();
    installFakeEngine(sandbox, 'codex', {
      stdoutFile: path.join(REPO, 'fixtures', 'streams', 'codex', 'file-change.stdout.jsonl'),
    });
    reportDir = path.join(sandbox.root, 'reports');
    const child = spawnSync(process.execPath, [VITEST, 'run', '--root', PROJECT], {
      cwd: REPO,
      env: childEnv({ AH_FIXTURE_REPORT_DIR: reportDir, AH_FIXTURE_RUN_ROOT: path.join(sandbox.root, 'runs') }),
      encoding: 'utf8',
      timeout: scaled(180_000),
    });
    // A failed trial does not fail the test (no gate): the run passes and writes every report.
    expect(child.status, `${child.stdout}\n${child.stderr}`).toBe(0);
    report = ConsistencyReportSchema.parse(
      JSON.parse(fs.readFileSync(path.join(reportDir, 'consistency.json'), 'utf8')),
    );
    browser = await launchBrowser();
  }, scaled(240_000));
  afterAll(async () => {
    await browser?.close();
    sandbox?.cleanup();
  });

  it("shows the strip, the interval and the failed trial's link to its run page, with its cause", async () => {
    const [row] = report.statistics!.rows;
    expect(row).toMatchObject({ engine: 'codex', arm: 'with-skill', n: 3, passed: 2, strip: 'PFP' });
    const failure = row!.failures[0]!;
    expect(failure).toMatchObject({ trial: 1, failureClass: 'task' });
    expect(failure.handle).toBeTruthy();

    const page = await browser.newPage();
    const problems: string[] = [];
    page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
    await page.goto(pathToFileURL(path.join(reportDir, 'report.html')).href, { timeout: scaled(60_000) });
    await page.waitForSelector('[data-testid="trial-strip"]', { timeout: scaled(60_000) });
    expect(await page.locator('[data-testid="trial-row"]').count()).toBe(1);
    expect(await page.textContent('[data-testid="trial-strip"]')).toBe('✓✗✓');
    expect(await page.textContent('[data-testid="trial-rate"]')).toBe(
      `66.7% [${(row!.ci95[0] * 100).toFixed(1)}%, ${(row!.ci95[1] * 100).toFixed(1)}%]`,
    );
    const link = '[data-testid="trial-link"]';
    expect(await page.locator(link).count()).toBe(1);
    expect(await page.getAttribute(link, 'href')).toBe(`#run=${failure.handle}`);
    expect(await page.getAttribute(link, 'title')).toMatch(/^trial 2: failed, task: .*greeting\.txt/);
    // The link opens the failed trial's run page.
    await page.click(link);
    await page.waitForSelector('[data-testid="attempt"]', { timeout: scaled(30_000) });
    expect(await page.textContent('main code')).toBe(failure.handle);
    expect(problems).toEqual([]);
    await page.close();
  });
});
