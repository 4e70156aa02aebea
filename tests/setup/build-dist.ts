/**
 * Global setup: brings dist/ up to date with src/ before any test runs, since the CLI tests run the real command
 * (`bin/agent-harness.js` runs dist/). Incremental: a run with no source change costs a second or two.
 */
import { spawnSync } from 'node:child_process';
import path from 'node:path';

/** Vitest's global setup hook. */
export default function setup(): void {
  const root = path.resolve(import.meta.dirname, '..', '..');
  const result = spawnSync(process.execPath, [path.join(root, 'scripts', 'build.mjs')], {
    cwd: root,
    stdio: 'inherit',
  });
  if (result.status !== 0)
    throw new Error(
      `scripts/build.mjs failed (exit status ${result.status ?? result.signal}): the CLI tests would run a stale dist/.`,
    );
}
