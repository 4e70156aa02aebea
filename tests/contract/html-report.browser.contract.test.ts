/**
 * The HTML report in a real browser (playwright-core driving the system's Chromium): `agent-harness report --html`
 * over CLI runs whose fake engines replay recorded streams (no engine process), opened from file://. The runs, the
 * timeline and its playback, the engine matrix, the aligned diff (across engines and against the previous report),
 * and hostile agent output: shown as text, running no script, the page still answering a click. Screenshots are
 * attached to each test. Skipped, saying why, where Chromium or playwright-core is absent (outside CI: there it fails).
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it, type TestContext } from 'vitest';
import { type BrowserHandle, type BrowserPage, browserUnavailable, launchBrowser } from '../helpers/browser.js';
import { BIN, createCliSandbox, installFakeEngine, REPO, runCliProcess, type CliSandbox } from '../helpers/cli.js';
import { BIDI_OVERRIDE, HOSTILE_MARKUP, writeHostileStream } from '../helpers/hostile-engine.js';
import { ACP_CONFORMANCE_COLUMNS } from '../../src/report/acp-conformance.js';
import { renderHtmlReport } from '../../src/report/render-html.js';
import { ConsistencyReportSchema } from '../../src/report/schema.js';
import { buildViewData } from '../../src/report/view-data.js';
import { scaled } from '../helpers/load-scaled.js';

const STREAMS = path.join(REPO, 'fixtures', 'streams');
const SHOTS = path.join(REPO, 'reports', 'ui-screenshots');
const unavailable = await browserUnavailable();
if (unavailable) console.warn(`html-report browser tests skipped: ${unavailable}`);

let sandbox: CliSandbox;
let browser: BrowserHandle;
let out: string;
const handles: Record<string, string> = {};

function handleOf(stderr: string): string {
  const match = /^Run handle: ([0-9a-f]{8})$/m.exec(stderr);
  if (!match) throw new Error(`no run handle in: ${stderr}`);
  return match[1]!;
}

/** A page that fails the test on a dialog, a page error or a request leaving the file. */
async function openPage(file: string): Promise<{ page: BrowserPage; problems: string[] }> {
  const page = await browser.newPage();
  const problems: string[] = [];
  page.on('dialog', (dialog) => {
    problems.push(`dialog: ${dialog.message()}`);
    void dialog.dismiss();
  });
  page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
  page.on('request', (request) => {
    if (!request.url().startsWith('file://')) problems.push(`request: ${request.url()}`);
  });
  await page.goto(pathToFileURL(file).href, { timeout: scaled(60_000) });
  await page.waitForSelector('[data-testid="runs"]', { timeout: scaled(60_000) });
  return { page, problems };
}

async function shot(page: BrowserPage, context: TestContext, name: string): Promise<void> {
  fs.mkdirSync(SHOTS, { recursive: true });
  const file = path.join(SHOTS, `${name}.png`);
  await page.screenshot({ path: file, fullPage: true });
  await context.annotate(`screenshot: ${name}`, 'screenshot', { path: file, contentType: 'image/png' });
}

// In CI a missing browser fails the tests (launchBrowser says what is missing): .ci/run installs Chromium.
describe.skipIf(unavailable !== null && !process.env.CI)('HTML report in Chromium', () => {
  beforeAll(async () => {
    sandbox = createCliSandbox();
    installFakeEngine(sandbox, 'codex', { stdoutFile: path.join(STREAMS, 'codex', 'turn1.stdout.jsonl') });
    installFakeEngine(sandbox, 'claude', { stdoutFile: path.join(STREAMS, 'claude', 'turn1.stdout.jsonl') });
    for (const engine of ['codex', 'claude'])
      handles[engine] = handleOf(runCliProcess(sandbox, ['start', '--prompt', 'Write out.txt.', engine]).stderr);
    out = path.join(sandbox.root, 'html-report');
    // A first report: the second one's baseline (its history).
    expect(runCliProcess(sandbox, ['report', '--html', '--out', out]).status).toBe(0);
    installFakeEngine(sandbox, 'codex', { stdoutFile: writeHostileStream(sandbox) });
    // Its 10 MB of output is echoed on stdout: not captured (spawnSync's buffer is smaller).
    const hostile = spawnSync(process.execPath, [BIN, 'start', '--prompt', 'Be hostile.', 'codex'], {
      cwd: sandbox.root,
      env: sandbox.env,
      encoding: 'utf8',
      stdio: ['ignore', 'ignore', 'pipe'],
      timeout: scaled(120_000),
    });
    handles.hostile = handleOf(hostile.stderr);
    installFakeEngine(sandbox, 'codex', { stdoutFile: path.join(STREAMS, 'codex', 'multibyte.stdout.jsonl') });
    handles.second = handleOf(runCliProcess(sandbox, ['start', '--prompt', 'Write out.txt.', 'codex']).stderr);
    const report = runCliProcess(sandbox, ['report', '--html', '--out', out]);
    expect(report.stderr).toContain('report.html');
    expect(report.status).toBe(0);
    browser = await launchBrowser();
  }, scaled(240_000));
  afterAll(async () => {
    await browser?.close();
    sandbox?.cleanup();
  });

  it('is one self-contained file with history, a CSP that lets only its own script run, and escaped data', () => {
    const html = fs.readFileSync(path.join(out, 'report.html'), 'utf8');
    expect(html).toContain(
      `<meta http-equiv="Content-Security-Policy" content="default-src 'none'; script-src 'sha256-`,
    );
    expect(html).not.toMatch(/script-src[^;]*unsafe-inline/); // scripts: by hash only
    expect(html).not.toMatch(/<(?:script|link|img|iframe)[^>]+(?:src|href)=/i);
    // The hostile text is in the data, but never as markup: only the two script tags of the page itself.
    expect(html.match(/<script/gi)).toHaveLength(2);
    expect(html.match(/<\/script/gi)).toHaveLength(2);
    expect(html).toContain('\\u003c/script\\u003e\\u003cscript\\u003ewindow.__pwned=1');
    // History: two reports kept, the index links both, relatively.
    const history = fs.readdirSync(path.join(out, 'history'));
    expect(history).toHaveLength(2);
    const index = fs.readFileSync(path.join(out, 'index.html'), 'utf8');
    for (const stamp of history) expect(index).toContain(`href="history/${stamp}/report.html"`);
    expect(index).not.toMatch(/href="(?:\/|[a-z]+:)/);
    // Links to run directories are relative.
    expect(html).not.toContain(`"href":"${sandbox.root}`);
  });

  it('lists every run with its handle and filters them', async (context) => {
    const { page, problems } = await openPage(path.join(out, 'report.html'));
    for (const handle of Object.values(handles)) await page.waitForSelector(`[data-testid="run-${handle}"]`);
    await page.selectOption('[data-testid="filter-engine"]', 'claude');
    await page.waitForSelector(`[data-testid="run-${handles.codex}"]`, { state: 'detached' });
    expect(await page.locator('[data-testid^="run-"]').count()).toBe(1);
    await page.selectOption('[data-testid="filter-engine"]', '');
    await page.fill('[data-testid="filter-test"]', 'hostile');
    await page.press('[data-testid="filter-test"]', 'Enter');
    await page.waitForSelector(`[data-testid="run-${handles.claude}"]`, { state: 'detached' });
    expect(await page.locator('[data-testid^="run-"]').count()).toBe(1);
    await shot(page, context, 'runs-filtered');
    expect(problems).toEqual([]);
    await page.close();
  });

  it('shows an attempt as a timeline: tool call with command, exit code and output, message, steps; plays it back', async (context) => {
    const { page, problems } = await openPage(path.join(out, 'report.html'));
    // Rows open with the keyboard too.
    await page.press(`[data-testid="run-${handles.codex}"]`, 'Enter');
    await page.waitForSelector('[data-testid="timeline"] [data-testid="item-tool"]');
    expect(await page.textContent('[data-testid="item-tool"] [data-testid="command"]')).toBe('echo hello > out.txt');
    expect(await page.textContent('[data-testid="item-tool"] [data-testid="exit-code"]')).toBe(' exit 0');
    expect(await page.textContent('[data-testid="item-message"]')).toContain('DONE');
    // The recorded stream has no done marker: the turn ended awaiting input (see docs/cli.md, verdicts).
    expect(await page.textContent('[data-testid="completion"]')).toBe('awaiting_input (turn_end_without_done_marker)');
    expect(await page.locator('[data-testid="steps"] tr').count()).toBeGreaterThan(2);
    expect(await page.locator('[data-testid="model-requests"] tr').count()).toBeGreaterThanOrEqual(1);
    expect(await page.textContent('[data-testid="conformance"]')).toContain('tool_call_count');
    await page.selectOption('[data-testid="speed"]', '16');
    await page.click('[data-testid="play"]');
    // Playback hides the items and shows each at its recorded time (scaled); all are shown by the end.
    await page.waitForSelector('[data-testid="timeline"][data-playback="done"]', { timeout: scaled(30_000) });
    expect(await page.locator('[data-testid="timeline"] li.hidden').count()).toBe(0);
    const times = (
      await page.evaluate<string[]>(
        "Array.from(document.querySelectorAll('[data-testid=timeline] li')).map((li) => li.getAttribute('data-t'))",
      )
    ).map(Number);
    expect(times.length).toBeGreaterThan(2);
    expect(times).toEqual([...times].sort((a, b) => a - b));
    await shot(page, context, 'timeline');
    expect(problems).toEqual([]);
    await page.close();
  });

  it("shows the report's cassette fidelity and ACP-against-native tables under the engine matrix", async (context) => {
    const report = ConsistencyReportSchema.parse(
      JSON.parse(fs.readFileSync(path.join(out, 'consistency.json'), 'utf8')),
    );
    report.fidelity = [{ engine: 'codex', recorded: 1, replayed: 2, exact: 3, divergent: 0, missed: 1, unused: 0 }];
    const pass = { status: 'pass' } as const;
    report.acpConformance = [
      {
        engine: 'gemini',
        eventTypes: pass,
        toolCalls: pass,
        finalMessage: pass,
        fsDiff: { status: 'fail', detail: 'hello.txt differs' },
        permissionAllow: pass,
        permissionReject: pass,
        cancel: { status: 'skipped', detail: 'not run' },
        resume: pass,
      },
    ];
    const file = path.join(out, 'tables.html');
    fs.writeFileSync(file, renderHtmlReport(buildViewData(report, { pageDir: out })));
    const { page, problems } = await openPage(file);
    await page.click('[data-testid="tab-matrix"]');
    await page.waitForSelector('[data-testid="acp-conformance"]');
    expect(await page.locator('[data-testid="acp-conformance"] th').allTextContents()).toEqual([
      'engine',
      ...ACP_CONFORMANCE_COLUMNS.map(([, title]) => title),
    ]);
    expect(await page.locator('[data-testid="acp-row-gemini"] td').allTextContents()).toEqual([
      'gemini',
      '✓',
      '✓',
      '✓',
      '✗',
      '✓',
      '✓',
      '–',
      '✓',
    ]);
    expect(await page.getAttribute('[data-testid="acp-row-gemini"] td:nth-child(5)', 'title')).toBe(
      'hello.txt differs',
    );
    expect(await page.locator('[data-testid="fidelity"] tr:nth-child(2) td').allTextContents()).toEqual([
      'codex',
      '1',
      '2',
      '3',
      '0',
      '1',
      '0',
    ]);
    await shot(page, context, 'tables');
    expect(problems).toEqual([]);
  });

  it('shows the engine matrix and an aligned diff across engines and against the previous report', async (context) => {
    const { page, problems } = await openPage(path.join(out, 'report.html'));
    await page.click('[data-testid="tab-matrix"]');
    await page.waitForSelector('[data-testid="matrix"]');
    expect(await page.locator('[data-testid="matrix-row"]').count()).toBeGreaterThanOrEqual(1);
    await shot(page, context, 'matrix');
    await page.click('[data-testid="compare"]');
    await page.waitForSelector('[data-testid="diff-tools"]');
    const summary = await page.textContent('[data-testid="diff-summary"]');
    expect(summary).toContain('codex');
    expect(summary).toContain('claude');
    // codex and claude both ran `echo hello > out.txt` (codex inside `/bin/bash -lc '…'`): one aligned row.
    await page.selectOption('[data-testid="diff-left"]', `now:${handles.codex}`);
    await page.selectOption('[data-testid="diff-right"]', `now:${handles.claude}`);
    await page.waitForSelector('[data-testid="tool-row-same"]');
    expect(await page.locator('[data-testid="tool-row-same"] td').allTextContents()).toEqual([
      'shell: echo hello > out.txt',
      '=',
      'shell: echo hello > out.txt',
    ]);
    expect(await page.locator('[data-testid^="tool-row-only"]').count()).toBe(0);
    await shot(page, context, 'diff-engines');
    // Against the previous report: the baseline tab lists what changed, and a case opens a diff baseline → now.
    await page.click('[data-testid="tab-baseline"]');
    await page.waitForSelector('[data-testid="baseline-table"]');
    // The codex case now ran again without a tool call (the newest codex run of the case is the report's).
    expect(await page.textContent('[data-testid="regressions"]')).toContain('tool calls 1 → 0');
    await shot(page, context, 'baseline');
    await page.click('[data-testid="baseline-diff"]');
    await page.waitForSelector('[data-testid="diff-tools"]');
    expect(await page.locator('[data-testid="tool-row-only-left"]').count()).toBe(1);
    expect(problems).toEqual([]);
    await page.close();
  });

  it('shows hostile agent output as text, runs none of it, and stays responsive with a 10 MB output', async (context) => {
    const { page, problems } = await openPage(path.join(out, 'report.html'));
    await page.click(`[data-testid="run-${handles.hostile}"]`);
    await page.waitForSelector('[data-testid="item-message"]', { timeout: scaled(60_000) });
    const message = await page.textContent('[data-testid="item-message"]');
    expect(message).toContain(HOSTILE_MARKUP);
    expect(message).toContain('evil\u27E6U+202E\u27E7txt.exe');
    expect(message).not.toContain(BIDI_OVERRIDE);
    expect(await page.textContent('[data-testid="item-reasoning"]')).toContain('<script>window.__pwned=1</script>');
    // The long output shows its first 64 KiB, and all of it (up to the report's 1 MiB cut) on a click.
    const first = await page.textContent('[data-testid="item-tool"] [data-testid="output"]');
    expect(first?.startsWith(HOSTILE_MARKUP)).toBe(true);
    expect(first).toHaveLength(65_536);
    await page.click('[data-testid="item-tool"] [data-testid="show-all"]');
    await page.waitForSelector('[data-testid="item-tool"] [data-testid="show-all"]', { state: 'detached' });
    const output = await page.textContent('[data-testid="item-tool"] [data-testid="output"]');
    expect(output!.length).toBeGreaterThan(1024 * 1024);
    expect(output).toContain('more characters in the attempt');
    // No injected element, no script ran, no dialog; and a click still works.
    expect(await page.evaluate<unknown>('window.__pwned')).toBeUndefined();
    expect(await page.locator('main img, main svg, main script').count()).toBe(0);
    await page.click('[data-testid="back"]');
    await page.waitForSelector('[data-testid="runs"]');
    await page.click(`[data-testid="run-${handles.hostile}"]`);
    await page.waitForSelector('[data-testid="item-tool"]');
    await shot(page, context, 'hostile');
    expect(await page.evaluate<unknown>('window.__pwned')).toBeUndefined();
    expect(problems).toEqual([]);
    await page.close();
  });
});
