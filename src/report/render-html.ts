/**
 * The HTML report: one self-contained file (style, script and data inlined; nothing loaded from anywhere). Its
 * Content-Security-Policy lets only the page's own script run (by its SHA-256), so agent output that somehow became
 * markup could still run nothing; the page inserts all agent content as text. The data is a
 * `<script type="application/json">` block with `<`, `>`, `&` and U+2028/2029 escaped, so no content closes it.
 */
import { createHash } from 'node:crypto';
import type { PageData } from './browser/page-data.js';
import { pageScript } from './html-page-script.js';
import { PAGE_STYLE } from './html-page-style.js';
import { renderTrialsSection, TRIALS_STYLE } from './html-page-trials.js';
import type { ViewData } from './view-schema.js';

/** JSON for a `<script type="application/json">` block: nothing in it can end the block or the script. */
export function scriptSafeJson(value: unknown): string {
  return JSON.stringify(value)
    .replace(/</g, '\\u003c')
    .replace(/>/g, '\\u003e')
    .replace(/&/g, '\\u0026')
    .replace(/\u2028/g, '\\u2028')
    .replace(/\u2029/g, '\\u2029');
}

/** The page script's CSP source (`'sha256-…'`). */
export function pageScriptHash(): string {
  return `'sha256-${createHash('sha256').update(pageScript(), 'utf8').digest('base64')}'`;
}

/**
 * The page's Content-Security-Policy: nothing loads from anywhere (`default-src 'none'`), only the page script runs,
 * images only as data: URLs; `connect` adds `connect-src 'self'` for the page `agent-harness view` serves (its API).
 */
export function pageCsp(options: { connect?: boolean } = {}): string {
  return [
    "default-src 'none'",
    `script-src ${pageScriptHash()}`,
    "style-src 'unsafe-inline'",
    'img-src data:',
    ...(options.connect ? ["connect-src 'self'"] : []),
    "base-uri 'none'",
    "form-action 'none'",
  ].join('; ');
}

const escapeHtml = (text: string): string =>
  text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

/** Renders the whole page. */
export function renderHtmlReport(data: ViewData): string {
  // What the page script reads of its data, typed on its side (browser/page-data.ts): tsc fails here if it is not there.
  const pageData: PageData = data;
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="${escapeHtml(pageCsp({ connect: data.live !== null }))}">
<meta name="referrer" content="no-referrer">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(data.title)}</title>
<style>${PAGE_STYLE}${data.report.statistics ? TRIALS_STYLE : ''}</style>
</head>
<body>
<noscript>This report needs JavaScript to show its runs; its data is in the block below and in consistency.json.</noscript>
<div id="app"></div>
${renderTrialsSection(data.report.statistics)}<script type="application/json" id="agent-harness-data">${scriptSafeJson(pageData)}</script>
<script>${pageScript()}</script>
</body>
</html>
`;
}
