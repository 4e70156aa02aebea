/**
 * The HTML report of a one-engine Vitest project in a real browser (playwright-core driving the system's Chromium):
 * a child Vitest runs fixtures/vitest-report-project, whose codex (a fake executable replaying a stream that
 * completes, no engine) completes twice; one test then fails an expectation. Its report.html names the failed test
 * and its assertion beside the run, and first on the run's page, with no engine matrix to fall back on. Skipped,
 * saying why, where Chromium or playwright-core is absent (outside CI: there it fails).
 */
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type BrowserHandle, browserUnavailable, launchBrowser } from '../helpers/browser.js';
import { runReportProject } from '../helpers/child-vitest.js';
import { type CliSandbox, REPO } from '../helpers/cli.js';
import type { ConsistencyReport } from '../../src/report/schema.js';
import { scaled } from '../helpers/load-scaled.js';

const PROJECT = path.join('fixtures', 'vitest-report-project');
const SHOTS = path.join(REPO, 'reports', 'ui-screenshots');
const unavailable = await browserUnavailable();
if (unavailable) console.warn(`html-report test-state browser tests skipped: ${unavailable}`);

let sandbox: CliSandbox;
let browser: BrowserHandle;
let reportDir: string;
let report: ConsistencyReport;

describe.skipIf(unavailable !== null && !process.env.CI)('HTML report of a one-engine project in Chromium', () => {
  beforeAll(async () => {
    // One test fails: the child run fails, and the reporter still writes every report.
    ({ sandbox, reportDir, report } = runReportProject(PROJECT, 1));
    browser = await launchBrowser();
  }, scaled(240_000));
  afterAll(async () => {
    await browser?.close();
    sandbox?.cleanup();
  });

  it('names the failed test and its assertion beside its completed run, and first on the run page', async (context) => {
    const failed = report.tests.find((t) => t.name === 'codex writes greeting.txt')!;
    const passed = report.tests.find((t) => t.name === 'codex answers')!;
    expect(failed.state).toBe('failed');
    expect(failed.completion?.state).toBe('completed');
    expect(passed.state).toBe('passed');
    // One engine: the matrix has no row, so it cannot be what names the failure.
    expect(report.matrix).toEqual([]);
    const assertion = failed.errors[0]!;
    expect(assertion).toContain('greeting.txt');

    const page = await browser.newPage();
    const problems: string[] = [];
    page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
    await page.goto(pathToFileURL(path.join(reportDir, 'report.html')).href, { timeout: scaled(60_000) });
    const row = `[data-testid="run-${failed.handle}"]`;
    await page.waitForSelector(row, { timeout: scaled(60_000) });
    expect(await page.textContent(`${row} td:nth-child(5)`)).toBe('completed');
    expect(await page.textContent(`${row} [data-testid="test-state"] span`)).toBe('failed');
    expect(await page.textContent(`${row} [data-testid="test-assertion"]`)).toBe(assertion.split('\n')[0]);
    const passedRow = `[data-testid="run-${passed.handle}"]`;
    expect(await page.textContent(`${passedRow} [data-testid="test-state"]`)).toBe('passed');
    // The test-state filter keeps the failed run only.
    await page.selectOption('[data-testid="filter-test state"]', 'failed');
    await page.waitForSelector(passedRow, { state: 'detached' });
    expect(await page.locator('[data-testid^="run-"]').count()).toBe(1);
    fs.mkdirSync(SHOTS, { recursive: true });
    const listShot = path.join(SHOTS, 'runs-test-state.png');
    await page.screenshot({ path: listShot, fullPage: true });
    await context.annotate('screenshot: runs-test-state', 'screenshot', { path: listShot, contentType: 'image/png' });

    await page.click(row);
    await page.waitForSelector('[data-testid="test-result"]');
    expect(await page.textContent('[data-testid="test-result-state"]')).toBe('failed');
    expect(await page.textContent('[data-testid="test-result"]')).toContain(failed.fullName);
    expect(await page.locator('[data-testid="test-error"]').allTextContents()).toEqual(failed.errors);
    // The failing expectation comes before the attempt: the first thing the run's page says.
    expect(
      await page.evaluate<boolean>(
        `!!(document.querySelector('[data-testid="test-result"]').compareDocumentPosition(document.querySelector('[data-testid="attempt"]')) & Node.DOCUMENT_POSITION_FOLLOWING)`,
      ),
    ).toBe(true);
    const pageShot = path.join(SHOTS, 'run-test-failed.png');
    await page.screenshot({ path: pageShot, fullPage: true });
    await context.annotate('screenshot: run-test-failed', 'screenshot', { path: pageShot, contentType: 'image/png' });
    expect(problems).toEqual([]);
    await page.close();
  });
});
