#!/usr/bin/env node
// The `agent-harness` command: runs the compiled CLI in dist/ (built by `npm run build`, and by `prepare` on
// `npm ci` in a checkout; a packed tarball ships it), bundled into one file where the build could (scripts/build.mjs).
// A checkout that wants to run its TypeScript sources uses `npm run cli -- <args>` (scripts/run-source.mjs, tsx).
import module from 'node:module';
import { existsSync } from 'node:fs';

// Node 22.1+ keeps the compiled modules between runs in its own cache directory; Node 20 has no such cache.
module.enableCompileCache?.();

const bundled = new URL('../dist/bundle/cli.mjs', import.meta.url);
const entry = existsSync(bundled) ? bundled : new URL('../dist/cli/main.js', import.meta.url);
if (!existsSync(entry)) {
  process.stderr.write(
    'agent-harness: error BUILD_MISSING: dist/ is not built, so there is no command to run.\n' +
      '  hint: in a checkout run `npm ci` (it builds dist/) or `npm run build`; `npm run cli -- <args>` runs the sources.\n',
  );
  process.exitCode = 2;
} else {
  const { runCli } = await import(entry.href);
  process.exitCode = await runCli(process.argv.slice(2));
}
