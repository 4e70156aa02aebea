/**
 * The HTML report's script, plain DOM and no framework, inlined into the page (whose CSP allows exactly this script,
 * by its hash). Its sources are TypeScript in src/report/browser/ (tsc checks them with the DOM lib:
 * tsconfig.browser.json; Biome lints them); page-script-compile.ts makes them one classic script.
 *
 * Where the compiled text comes from: run from the sources (Vitest, tsx, `npm run cli`), this module compiles them
 * on first use with the `typescript` package, a dev dependency present wherever the sources run, so an edit shows
 * with no build step. The build (scripts/build.mjs) compiles them once and writes this module's dist/ file with the
 * text in it, so the package needs neither the sources nor typescript (html-page-script.contract.test.ts checks both
 * ways give the same script).
 */
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type TS from 'typescript';
import { compilePageScript, readBrowserSources } from './page-script-compile.js';

let compiled: string | undefined;

/** The page script (compiled from the sources on first use; the build writes a dist/ module returning its text). */
export function pageScript(): string {
  compiled ??= compilePageScript(
    createRequire(import.meta.url)('typescript') as typeof TS,
    readBrowserSources(path.join(path.dirname(fileURLToPath(import.meta.url)), 'browser')),
  );
  return compiled;
}
