/**
 * With the real gemini and qwen CLIs: an attempt runs the engine's script with the harness's Node and
 * `--liftoff-only` (the tree-sitter grammar each checks every shell command with is not recompiled by TurboFan:
 * about half the CPU of an attempt that runs a shell command; qwen's script in place of its launcher `cli-entry.js`,
 * with the launcher's `--expose-gc`), and records both in the meta; `AGENT_HARNESS_NPM_LAUNCHERS=1` runs the engine
 * as installed. The agent's shell prints its parent's command line (the shell's parent is the engine's Node process),
 * so the check is what the engine process really ran with.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { GEMINI_VERSION } from '../../src/engines/gemini/index.js';
import { QWEN_VERSION } from '../../src/engines/qwen/index.js';
import { turns } from '../../src/model/index.js';
import type { EngineId } from '../../src/protocol/index.js';
import { engineMissingReason } from '../helpers/engines.js';
import { launchAttempt, launchTestPaths } from '../helpers/launch-attempt.js';
import { scaled } from '../helpers/load-scaled.js';

const paths = launchTestPaths('node-launch');
const script = {
  version: 1 as const,
  turns: [turns.shell(`tr '\\0' '\\n' < /proc/$PPID/cmdline > engine.txt`), turns.final('Done.')],
};

/** The engine process's argv as its shell saw it (argv[0] first). */
function engineArgv(runDir: string): string[] {
  return fs.readFileSync(path.join(runDir, 'engine.txt'), 'utf8').trim().split('\n');
}

const geminiBundle = fs.realpathSync(path.resolve('node_modules/@google/gemini-cli/bundle/gemini.js'));
const qwenLauncher = fs.realpathSync(path.resolve('node_modules/@qwen-code/qwen-code/cli-entry.js'));
const qwenCli = path.join(path.dirname(qwenLauncher), 'cli.js');

/** Each engine: the installed script, what the harness runs, and what the installed script's engine process gets. */
const ROWS: Array<{
  engine: EngineId;
  version: string;
  installed: string;
  native: string[];
  asInstalled(executable: string): string[];
}> = [
  {
    engine: 'gemini',
    version: GEMINI_VERSION,
    installed: geminiBundle,
    native: ['--liftoff-only', geminiBundle],
    // Run as installed, the bundle is the engine process (`node <bundle>` by its `#!` line), without the flag.
    asInstalled: (executable: string) => [executable],
  },
  {
    engine: 'qwen',
    version: QWEN_VERSION,
    installed: qwenLauncher,
    native: ['--expose-gc', '--liftoff-only', qwenCli],
    // Run as installed, the launcher starts `node --expose-gc cli.js`: the engine process has its flag only.
    asInstalled: () => ['--expose-gc', qwenCli],
  },
];

/** The row's attempt, through the stand-in or (`npmLaunchers`) as installed; skipped, saying why, without the engine. */
async function rowAttempt(row: (typeof ROWS)[number], skip: (note: string) => never, npmLaunchers: boolean) {
  const missing = await engineMissingReason(row.engine);
  if (missing) skip(missing);
  return launchAttempt(paths, row.engine, script, npmLaunchers);
}

describe.for(ROWS)('$engine launch', (row) => {
  it(
    'runs the script with Node and --liftoff-only, and records both',
    async ({ skip }) => {
      const { result, meta } = await rowAttempt(row, skip, false);
      expect(meta.command.executable).toBe(process.execPath);
      expect(meta.command.argv.slice(0, row.native.length + 1)).toEqual([...row.native, '-p']);
      expect(meta.command.launcher).toBe(row.installed);
      expect(meta.engine_version).toBe(row.version);
      expect(engineArgv(result.runDir).slice(1, row.native.length + 2)).toEqual([...row.native, '-p']);
    },
    scaled(120_000),
  );

  it(
    'AGENT_HARNESS_NPM_LAUNCHERS=1 runs it as installed, without --liftoff-only',
    async ({ skip }) => {
      const { result, meta } = await rowAttempt(row, skip, true);
      expect(meta.command.launcher).toBeUndefined();
      expect(fs.realpathSync(meta.command.executable)).toBe(row.installed);
      const argv = engineArgv(result.runDir);
      expect(argv).not.toContain('--liftoff-only');
      const expected = row.asInstalled(meta.command.executable);
      expect(argv.slice(1, expected.length + 2)).toEqual([...expected, '-p']);
    },
    scaled(120_000),
  );
});
