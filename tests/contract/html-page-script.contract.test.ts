/**
 * The HTML report's script is TypeScript (src/report/browser/, checked by tsc with the DOM lib and linted by Biome),
 * not a string: the page inlines exactly those sources compiled, from the sources and from the build, as one classic
 * script; and the compile refuses sources that one shared scope could not hold as tsc saw them.
 */
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import vm from 'node:vm';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { buildConsistencyReport } from '../../src/report/build.js';
import { compilePageScript, readBrowserSources } from '../../src/report/page-script-compile.js';
import { renderHtmlReport } from '../../src/report/render-html.js';
import { VIEW_DATA_VERSION, type ViewData } from '../../src/report/view-schema.js';

const BROWSER = path.resolve('src/report/browser');

const data: ViewData = {
  version: VIEW_DATA_VERSION,
  generatedAt: '2026-01-01T00:00:00.000Z',
  title: 't',
  report: buildConsistencyReport([], 'test'),
  runs: [],
  baseline: null,
  live: null,
};

/** The page's own script (the last `<script>`, after the data block). */
function inlineScript(html: string): string {
  return /<script>([\s\S]*)<\/script>\n<\/body>/.exec(html)![1]!;
}

/** A compile's error, or a failure when it compiled. */
function compileError(sources: { name: string; text: string }[]): Error {
  try {
    compilePageScript(ts, sources);
  } catch (error) {
    return error as Error;
  }
  throw new Error('the compile accepted the sources');
}

describe('the page script', () => {
  const compiled = compilePageScript(ts, readBrowserSources(BROWSER));

  it('is the browser sources compiled, one classic script (no module syntax)', () => {
    expect(inlineScript(renderHtmlReport(data))).toBe(compiled);
    // A classic script parses as one; an import or export left in it would not.
    expect(() => new vm.Script(compiled)).not.toThrow();
    expect(compiled).toMatch(/^\(function \(\) \{\n'use strict';\nconst ACP_COLUMNS = \[\["eventTypes","events"\]/);
    expect(compiled).toContain('function renderAttempt(main) {');
    expect(compiled).not.toContain(': HTMLElement');
  });

  it('is the same script in the built package (dist/, which the bin and the tarball run)', async () => {
    const built = (await import(pathToFileURL(path.resolve('dist/report/render-html.js')).href)) as {
      renderHtmlReport: typeof renderHtmlReport;
    };
    expect(inlineScript(built.renderHtmlReport(data))).toBe(compiled);
    expect(fs.readFileSync('dist/report/html-page-script.js', 'utf8')).not.toContain('typescript');
  });

  it('is type-checked by `npm run typecheck` against the DOM lib', () => {
    const pkg = JSON.parse(fs.readFileSync('package.json', 'utf8')) as { scripts: Record<string, string> };
    expect(pkg.scripts.typecheck).toContain('tsc --noEmit -p tsconfig.browser.json');
    const config = JSON.parse(fs.readFileSync('tsconfig.browser.json', 'utf8'));
    expect(config.include).toEqual(['src/report/browser']);
    expect(config.compilerOptions.lib).toContain('DOM');
  });

  it('refuses a name two files declare, an import from outside, and a file it does not list', () => {
    const sources = readBrowserSources(BROWSER);
    const withText = (name: string, more: string) =>
      sources.map((s) => (s.name === name ? { name, text: `${s.text}\n${more}\n` } : s));
    expect(compileError(withText('diff.ts', 'function shown(): void {}')).message).toBe(
      "src/report/browser/diff.ts: declares shown at its top level, as dom.ts does; the page script's files share one scope: rename one.",
    );
    expect(compileError(withText('main.ts', "import fs from 'node:fs';\nfs.existsSync('x');")).message).toMatch(
      /^src\/report\/browser\/main\.ts: imports node:fs; the page script can import only its sibling files/,
    );
    expect(compileError([...sources, { name: 'extra.ts', text: 'export {};' }]).message).toMatch(
      /^The page script's sources are page-data\.ts, .*, main\.ts, extra\.ts; expected /,
    );
  });
});
