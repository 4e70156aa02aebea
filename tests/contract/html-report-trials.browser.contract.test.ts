import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ConsistencyReport } from '../../src/report/schema.js';
import { type BrowserHandle, browserUnavailable, launchBrowser } from '../helpers/browser.js';
import { runReportProject } from '../helpers/child-vitest.js';
import type { CliSandbox } from '../helpers/cli.js';
import { scaled } from '../helpers/load-scaled.js';

const PROJECT = path.join('fixtures', 'vitest-trials-report-project');
const unavailable = await browserUnavailable();
if (unavailable) console.warn(`html-report trials browser tests skipped: ${unavailable}`);

let sandbox: CliSandbox;
let browser: BrowserHandle;
let reportDir: string;
let report: ConsistencyReport;

describe.skipIf(unavailable !== null && !process.env.CI)('the Trials section of report.html in Chromium', () => {
  beforeAll(async () => {
    // A failed trial does not fail the test (no gate): the run passes and writes every report.
    ({ sandbox, reportDir, report } = runReportProject(PROJECT, 0));
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
