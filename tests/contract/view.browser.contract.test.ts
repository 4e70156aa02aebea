/**
 * `agent-harness view` in a real browser: the served page lists the runs, fetches an attempt from the API, and tails
 * a running attempt live (its tool call shows while the engine still runs; its message and verdict once it ends).
 * The page without the token is refused. Skipped, saying why, where Chromium or playwright-core is absent (outside
 * CI: there it fails).
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startViewServer, type ViewServer } from '../../src/report/view-server.js';
import { resolveHarnessPaths } from '../../src/runtime/paths.js';
import { type BrowserHandle, browserUnavailable, launchBrowser } from '../helpers/browser.js';
import { BIN, createCliSandbox, installFakeEngine, REPO, runCliProcess, type CliSandbox } from '../helpers/cli.js';
import { installGatedEngine } from '../helpers/hostile-engine.js';
import { scaled } from '../helpers/load-scaled.js';

const SHOTS = path.join(REPO, 'reports', 'ui-screenshots');
const unavailable = await browserUnavailable();
if (unavailable) console.warn(`view browser tests skipped: ${unavailable}`);

let sandbox: CliSandbox;
let browser: BrowserHandle;
let server: ViewServer;
let finished = '';

// In CI a missing browser fails the tests (launchBrowser says what is missing): .ci/run installs Chromium.
describe.skipIf(unavailable !== null && !process.env.CI)('agent-harness view in Chromium', () => {
  beforeAll(async () => {
    sandbox = createCliSandbox();
    installFakeEngine(sandbox, 'codex', {
      stdoutFile: path.join(REPO, 'fixtures', 'streams', 'codex', 'turn1.stdout.jsonl'),
    });
    finished = /^Run handle: ([0-9a-f]{8})$/m.exec(
      runCliProcess(sandbox, ['start', '--prompt', 'Write out.txt.', 'codex']).stderr,
    )![1]!;
    const runRoot = resolveHarnessPaths({ cwd: sandbox.root, env: sandbox.env }).runRoot;
    server = await startViewServer({ runRoot });
    browser = await launchBrowser();
  }, scaled(120_000));
  afterAll(async () => {
    await browser?.close();
    await server?.close();
    sandbox?.cleanup();
  });

  it('refuses the page without its token', async () => {
    const page = await browser.newPage();
    await page.goto(server.url.replace(/\?token=.*/, ''));
    expect(await page.textContent('body')).toContain('FORBIDDEN');
    await page.close();
  });

  it('shows a finished attempt from the API and tails a running one live', async (context) => {
    const page = await browser.newPage();
    const problems: string[] = [];
    page.on('pageerror', (error) => problems.push(error.message));
    page.on('dialog', (dialog) => {
      problems.push(`dialog: ${dialog.message()}`);
      void dialog.dismiss();
    });
    await page.goto(server.url);
    await page.click(`[data-testid="run-${finished}"]`);
    // The page holds no timeline of its own: it fetched this one from /api/v1/runs/<handle>/attempts/1.
    expect(await page.textContent('[data-testid="item-tool"] [data-testid="command"]')).toBe('echo hello > out.txt');

    const gate = installGatedEngine(sandbox);
    const start = spawn(process.execPath, [BIN, 'start', '--prompt', 'Live.', 'codex'], {
      cwd: sandbox.root,
      env: sandbox.env,
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    const exited = new Promise<number | null>((resolve) => start.on('exit', resolve));
    // Refresh the list (from /api/v1/runs) until the running run is in it, then open it.
    await page.click('[data-testid="back"]');
    let live = '';
    await expect
      .poll(
        async () => {
          await page.click('[data-testid="refresh"]');
          await page.waitForSelector('[data-testid="runs"]');
          const ids = await page.evaluate<string[]>(
            "Array.from(document.querySelectorAll('[data-testid^=run-]')).filter((tr) => tr.textContent.includes('running')).map((tr) => tr.getAttribute('data-testid'))",
          );
          live = ids[0] ?? '';
          return live;
        },
        { timeout: scaled(60_000), interval: 250 },
      )
      .not.toBe('');
    await page.click(`[data-testid="${live}"]`);
    await page.waitForSelector('[data-testid="item-tool"]', { timeout: scaled(60_000) });
    expect(await page.textContent('[data-testid="item-tool"] [data-testid="command"]')).toBe('echo live > live.txt');
    expect(await page.locator('[data-testid="item-message"]').count()).toBe(0);
    fs.mkdirSync(SHOTS, { recursive: true });
    const running = path.join(SHOTS, 'view-live-running.png');
    await page.screenshot({ path: running, fullPage: true });
    await context.annotate('screenshot: live tail, running', 'screenshot', { path: running, contentType: 'image/png' });

    fs.writeFileSync(gate, '');
    expect(await exited).toBe(0);
    // The tail shows the message as it comes, then the page reloads the run and shows its verdict.
    await page.waitForSelector('[data-testid="item-message"]', { timeout: scaled(60_000) });
    expect(await page.textContent('[data-testid="item-message"]')).toContain('LIVE-DONE');
    await page.waitForSelector('[data-testid="completion"]', { timeout: scaled(60_000) });
    const done = path.join(SHOTS, 'view-live-done.png');
    await page.screenshot({ path: done, fullPage: true });
    await context.annotate('screenshot: live tail, ended', 'screenshot', { path: done, contentType: 'image/png' });
    expect(problems).toEqual([]);
    await page.close();
  });
});
