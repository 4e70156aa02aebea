/**
 * With the real qwen CLI: an attempt runs qwen's `cli.js` with Node, the launcher's `--expose-gc` and `--liftoff-only`
 * (the tree-sitter grammar qwen parses each shell command with is not recompiled by TurboFan: about half the CPU of an
 * attempt that runs a shell command) in place of its launcher `cli-entry.js`, and records both in the meta;
 * `AGENT_HARNESS_NPM_LAUNCHERS=1` runs the launcher as installed. The agent's shell prints its parent's command line,
 * so the check is what the engine process really ran with.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runAttempt } from '../../src/core/run-attempt.js';
import { QWEN_VERSION } from '../../src/engines/qwen/index.js';
import { turns } from '../../src/model/index.js';
import { resolveHarnessPaths } from '../../src/runtime/paths.js';
import { scaled } from '../helpers/load-scaled.js';

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'ah-qwen-launch-'));
afterAll(() => fs.rmSync(dataDir, { recursive: true, force: true }));
const paths = resolveHarnessPaths({
  env: { SKILL_RUNNER_DATA_DIR: dataDir },
  projectRoot: process.cwd(),
  skillRoots: [],
});
const launcher = fs.realpathSync(path.resolve('node_modules/@qwen-code/qwen-code/cli-entry.js'));
const cli = path.join(path.dirname(launcher), 'cli.js');
// qwen runs the command in a shell, whose parent is the engine's Node process.
const script = {
  version: 1 as const,
  turns: [turns.shell(`tr '\\0' '\\n' < /proc/$PPID/cmdline > engine.txt`), turns.final('Done.')],
};

/** The engine process's argv as its shell saw it (argv[0] first). */
function engineArgv(runDir: string): string[] {
  return fs.readFileSync(path.join(runDir, 'engine.txt'), 'utf8').trim().split('\n');
}

describe('qwen launch', () => {
  it(
    "runs cli.js with Node, the launcher's flag and --liftoff-only, and records both",
    async () => {
      const result = await runAttempt({
        paths,
        engine: 'qwen',
        launch: 'start',
        prompt: 'go',
        script,
        hostEnv: { ...process.env, AGENT_HARNESS_NPM_LAUNCHERS: '' },
      });
      expect(result.completion.state, result.error?.message).toBe('completed');
      const meta = JSON.parse(fs.readFileSync(result.audit.meta, 'utf8'));
      expect(meta.command.executable).toBe(process.execPath);
      expect(meta.command.argv.slice(0, 4)).toEqual(['--expose-gc', '--liftoff-only', cli, '-p']);
      expect(meta.command.launcher).toBe(launcher);
      expect(meta.engine_version).toBe(QWEN_VERSION);
      expect(engineArgv(result.runDir).slice(1, 5)).toEqual(['--expose-gc', '--liftoff-only', cli, '-p']);
    },
    scaled(120_000),
  );

  it(
    "AGENT_HARNESS_NPM_LAUNCHERS=1 runs the launcher as installed, whose child has only the launcher's flag",
    async () => {
      const result = await runAttempt({
        paths,
        engine: 'qwen',
        launch: 'start',
        prompt: 'go',
        script,
        hostEnv: { ...process.env, AGENT_HARNESS_NPM_LAUNCHERS: '1' },
      });
      expect(result.completion.state, result.error?.message).toBe('completed');
      const meta = JSON.parse(fs.readFileSync(result.audit.meta, 'utf8'));
      expect(meta.command.launcher).toBeUndefined();
      expect(fs.realpathSync(meta.command.executable)).toBe(launcher);
      expect(engineArgv(result.runDir).slice(1, 4)).toEqual(['--expose-gc', cli, '-p']);
    },
    scaled(120_000),
  );
});
