// Builds dist/ from src/ with tsc (tsconfig.build.json).
//   node scripts/build.mjs           incremental: only what changed is compiled again (prepare, the tests' setup)
//   node scripts/build.mjs --clean   dist/ from scratch (npm run build, prepack), so nothing of a deleted source is packed
import { spawnSync } from 'node:child_process';
import { existsSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.join(path.dirname(fileURLToPath(import.meta.url)), '..');
const buildInfo = path.join(root, 'node_modules', '.cache', 'agent-harness', 'tsconfig.build.tsbuildinfo');

/** Compiles src/ into dist/; exits non-zero when tsc fails or is not installed. */
function build({ clean }) {
  if (clean) rmSync(path.join(root, 'dist'), { recursive: true, force: true });
  // tsc's build info says what it emitted last time, not whether that is still there: without dist/, start over.
  if (clean || !existsSync(path.join(root, 'dist', 'cli', 'main.js'))) rmSync(buildInfo, { force: true });
  let tsc;
  try {
    tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
  } catch {
    console.error('agent-harness build: typescript is not installed (dev dependencies omitted?); dist/ was not built.');
    return 1;
  }
  const args = [tsc, '-p', path.join(root, 'tsconfig.build.json'), '--incremental', '--tsBuildInfoFile', buildInfo];
  const result = spawnSync(process.execPath, args, { cwd: root, stdio: 'inherit' });
  if (result.status !== 0) console.error(`agent-harness build: tsc failed (${result.error?.message ?? `exit status ${result.status ?? result.signal}`}).`);
  return result.status ?? 1;
}

process.exitCode = build({ clean: process.argv.includes('--clean') });
