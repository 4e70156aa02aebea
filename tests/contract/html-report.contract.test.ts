/**
 * The HTML report without a browser: the embedded data cannot end its block whatever the agent wrote, the CSP allows
 * exactly the page's own script, long texts are cut with a note, tool calls get the normalized key the diffs align
 * on, and the history keeps one report per run with an index (the browser tests check what the page shows).
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isRawLineEvent } from '../../src/report/attempt-view.js';
import { buildConsistencyReport } from '../../src/report/build.js';
import { writeHtmlReport } from '../../src/report/html-history.js';
import { boundText, toolKey } from '../../src/report/rasp-timeline.js';
import { pageCsp, renderHtmlReport, scriptSafeJson } from '../../src/report/render-html.js';
import { VIEW_DATA_VERSION, ViewDataSchema, type ViewData } from '../../src/report/view-schema.js';

const HOSTILE = '</script><script>alert(1)</script><!-- \u2028\u2029 & <b>x</b> \u202E';
let tmp: string;
beforeAll(() => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'ah-html-'));
});
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

function data(title: string): ViewData {
  return {
    version: VIEW_DATA_VERSION,
    generatedAt: '2026-01-01T00:00:00.000Z',
    title,
    report: buildConsistencyReport([], 'test'),
    runs: [],
    baseline: null,
    live: null,
  };
}

describe('HTML report', () => {
  it('embeds any text as JSON that cannot end its script block, and reads back the same', () => {
    const json = scriptSafeJson({ text: HOSTILE });
    expect(json).not.toMatch(/[<>&\u2028\u2029]/);
    expect(JSON.parse(json)).toEqual({ text: HOSTILE });
    const html = renderHtmlReport(data(HOSTILE));
    expect(html.match(/<script/g)).toHaveLength(2);
    expect(html.match(/<\/script/g)).toHaveLength(2);
    expect(html).toContain('<title>&lt;/script&gt;&lt;script&gt;alert(1)&lt;/script&gt;');
    const embedded = /<script type="application\/json" id="agent-harness-data">([^<]*)<\/script>/.exec(html)![1]!;
    expect(ViewDataSchema.parse(JSON.parse(embedded)).title).toBe(HOSTILE);
  });

  it("lets only the page's own script run: its SHA-256 is the CSP's only script source", () => {
    const html = renderHtmlReport(data('t'));
    const script = /<script>([\s\S]*)<\/script>\n<\/body>/.exec(html)![1]!;
    const hash = createHash('sha256').update(script, 'utf8').digest('base64');
    expect(pageCsp()).toBe(
      `default-src 'none'; script-src 'sha256-${hash}'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'`,
    );
    expect(html).toContain(`content="${pageCsp()}"`);
    expect(pageCsp({ connect: true })).toContain("connect-src 'self'");
  });

  it('cuts long texts saying how much was left out, and keys tool calls on their normalized form', () => {
    expect(boundText('abcdef', 4)).toBe("abcd\n… 2 more characters in the attempt's raw logs");
    expect(boundText('abc', 4)).toBe('abc');
    expect(toolKey({ kind: 'shell', name: 'Bash', command: ' echo  hi\n', input: null })).toBe('shell: echo hi');
    expect(toolKey({ kind: 'file_change', name: 'Write', command: null, input: '{}' })).toBe('file_change:');
    expect(toolKey({ kind: 'mcp', name: 'docs.search', command: null, input: null })).toBe('mcp: docs.search');
  });

  it('skips raw output lines of RASP unparsed, and only them', () => {
    const envelope = { protocol_version: 'rasp/1.0', run_id: 'r', attempt: 1, seq: 1, ts: 't', engine: 'codex' };
    const text = '{"data":{"type":"raw.line"';
    expect(isRawLineEvent(JSON.stringify({ ...envelope, data: { type: 'raw.line', text } }))).toBe(true);
    const message = { type: 'engine.assistant.message', message_id: 'm', text, final: true };
    expect(isRawLineEvent(JSON.stringify({ ...envelope, data: message }))).toBe(false);
  });

  it('keeps one report per run in history/, the previous one as the next baseline, and an index', () => {
    const dir = path.join(tmp, 'reports');
    const report = buildConsistencyReport([], 'first', new Date('2026-01-01T00:00:00Z'));
    const first = writeHtmlReport(dir, report, { now: new Date('2026-01-01T00:00:00Z') });
    const second = writeHtmlReport(dir, buildConsistencyReport([], 'second'), {
      now: new Date('2026-01-01T00:00:00Z'),
    });
    expect(first.historyHtml).not.toBe(second.historyHtml);
    expect(fs.readdirSync(path.join(dir, 'history')).sort()).toEqual(['20260101T000000000Z', '20260101T000000000Z-1']);
    const index = fs.readFileSync(second.index, 'utf8');
    expect(index.indexOf('000Z-1/report.html')).toBeLessThan(index.indexOf('000Z/report.html'));
    const page = fs.readFileSync(second.html, 'utf8');
    expect(page).toContain('"label":"previous run (2026-01-01T00:00:00.000Z)"');
  });
});
