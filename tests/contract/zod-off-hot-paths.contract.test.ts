/**
 * zod stays off the hot paths of the command (issue 44): a fresh `agent-harness` process loads no zod for `--version`,
 * `--help`, `translate --summary` of a recorded stream, or a `start` and a `resume` through the engine step and the
 * seal with the scripted model. zod's schemas stay where input comes from outside (a `--script` file, a lease or a
 * running meta found in a run directory, a user's config), loaded on first use.
 *
 * Run through the built command (`bin/agent-harness.js`, what a user runs), with a module hook logging every file the
 * process loads. zod counts as loaded when a file of the `zod` package is (the unbundled `dist/cli/main.js`, when
 * the build had no esbuild), or a chunk of the bundle that holds zod's code (its core type tag `"$ZodType"`: the
 * bundle never minifies strings). The detector is checked on a start given a `--script`, which does load zod.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { BIN, createCliSandbox, installFakeEngine, REPO } from '../helpers/cli.js';
import { scaled } from '../helpers/load-scaled.js';

const STREAM = path.join(REPO, 'fixtures', 'streams', 'codex', 'done-marker.stdout.jsonl');
const sandbox = createCliSandbox();
installFakeEngine(sandbox, 'codex', { stdoutFile: STREAM });
afterAll(() => sandbox.cleanup());

/** zod's code, in a file the process loaded: the package itself, or a bundle chunk holding it. */
function holdsZod(file: string): boolean {
  if (file.split(path.sep).includes('node_modules')) return /[\\/]node_modules[\\/]zod[\\/]/.test(file);
  return file.endsWith('.mjs') && fs.readFileSync(file, 'utf8').includes('"$ZodType"');
}

/**
 * Runs the built command with `args` in the sandbox (it must succeed); its stderr and the files of zod it loaded
 * (none, where it loaded no zod).
 */
function run(args: string[]): { stderr: string; zod: string[] } {
  const log = path.join(sandbox.root, `imports-${Math.random().toString(16).slice(2)}.log`);
  const result = spawnSync(
    process.execPath,
    ['--import', path.join(REPO, 'tests/helpers/import-log/register.mjs'), BIN, ...args],
    {
      cwd: sandbox.root,
      env: { ...sandbox.env, AH_IMPORT_LOG: log },
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
      timeout: scaled(120_000),
    },
  );
  expect(result.status, result.stderr).toBe(0);
  const loaded = [...new Set(fs.readFileSync(log, 'utf8').split('\n').filter(Boolean))].map((url) =>
    fileURLToPath(url),
  );
  // The log saw the command itself: an empty log would pass every test below.
  expect(loaded.some((file) => file.startsWith(path.join(REPO, 'dist')))).toBe(true);
  return { stderr: result.stderr, zod: loaded.filter(holdsZod).map((file) => path.relative(REPO, file)) };
}

/** The handle of the run a start or resume printed. */
function handleOf(stderr: string): string {
  const handle = /agent-harness resume ([0-9a-f]{8})/.exec(stderr)?.[1];
  expect(handle, stderr).toBeDefined();
  return handle!;
}

describe('zod off the hot paths of the command', () => {
  it.each([
    ['--version', ['--version']],
    ['--help', ['--help']],
    ['translate --summary', ['translate', '--engine', 'codex', '--stdout', STREAM, '--summary']],
  ])('%s loads no zod', (_label, args) => {
    expect(run(args).zod).toEqual([]);
  });

  it('a start (scripted model, engine step, seal) and a resume of its run load no zod', () => {
    const start = run(['start', '--prompt', 'hi', 'codex']);
    // The engine ran and the attempt was sealed: the whole start path was taken.
    expect(start.stderr).toContain('Completion: completed (done_marker)');
    expect(start.zod).toEqual([]);
    expect(run(['resume', handleOf(start.stderr), 'again']).zod).toEqual([]);
  });

  it('the detector sees zod where a command loads it: a start given a --script file checks it with its schema', () => {
    const script = path.join(sandbox.root, 'script.json');
    fs.writeFileSync(script, JSON.stringify({ version: 1, turns: [{ type: 'final', text: 'Done.', done: true }] }));
    expect(run(['start', '--script', script, '--prompt', 'hi', 'codex']).zod).not.toEqual([]);
  });
});
