#!/usr/bin/env node
// Entry point of the `agent-harness` command. In a checkout (src/ present) it runs the TypeScript sources
// through tsx, so `npx agent-harness` works right after `npm ci` with no build; a published package runs dist/.
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const source = join(root, 'src', 'cli', 'main.ts');
let main;
if (existsSync(source)) {
  const { tsImport } = await import('tsx/esm/api');
  main = await tsImport(pathToFileURL(source).href, import.meta.url);
} else {
  main = await import(pathToFileURL(join(root, 'dist', 'cli', 'main.js')).href);
}
process.exitCode = await main.runCli(process.argv.slice(2));
