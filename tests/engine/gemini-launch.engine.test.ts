/**
 * With the real gemini CLI: an attempt runs gemini's bundle with Node and `--liftoff-only` (the tree-sitter grammar
 * gemini checks each shell command with is not recompiled by TurboFan: about half the CPU of an attempt that runs a
 * shell command) and records both in the meta; `AGENT_HARNESS_NPM_LAUNCHERS=1` runs the bundle as installed. The
 * agent's shell prints its parent's command line, so the check is what the engine process really ran with.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runAttempt } from '../../src/core/run-attempt.js';
import { GEMINI_VERSION } from '../../src/engines/gemini/index.js';
import { turns } from '../../src/model/index.js';
import { resolveHarnessPaths } from '../../src/runtime/paths.js';
import { scaled } from '../helpers/load-scaled.js';

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'ah-gemini-launch-'));
afterAll(() => fs.rmSync(dataDir, { recursive: true, force: true }));
const paths = resolveHarnessPaths({
  env: { SKILL_RUNNER_DATA_DIR: dataDir },
  projectRoot: process.cwd(),
  skillRoots: [],
});
const bundle = fs.realpathSync(path.resolve('node_modules/@google/gemini-cli/bundle/gemini.js'));
// gemini runs the command in `bash -c`, whose parent is the engine's Node process.
const script = {
  version: 1 as const,
  turns: [turns.shell(`tr '\\0' '\\n' < /proc/$PPID/cmdline > engine.txt`), turns.final('Done.')],
};

/** The engine process's argv as its shell saw it (argv[0] first). */
function engineArgv(runDir: string): string[] {
  return fs.readFileSync(path.join(runDir, 'engine.txt'), 'utf8').trim().split('\n');
}

describe('gemini launch', () => {
  it(
    'runs the bundle with Node and --liftoff-only, and records both',
    async () => {
      const result = await runAttempt({
        paths,
        engine: 'gemini',
        launch: 'start',
        prompt: 'go',
        script,
        hostEnv: { ...process.env, AGENT_HARNESS_NPM_LAUNCHERS: '' },
      });
      expect(result.completion.state, result.error?.message).toBe('completed');
      const meta = JSON.parse(fs.readFileSync(result.audit.meta, 'utf8'));
      expect(meta.command.executable).toBe(process.execPath);
      expect(meta.command.argv.slice(0, 3)).toEqual(['--liftoff-only', bundle, '-p']);
      expect(meta.command.launcher).toBe(bundle);
      expect(meta.engine_version).toBe(GEMINI_VERSION);
      expect(engineArgv(result.runDir).slice(1, 4)).toEqual(['--liftoff-only', bundle, '-p']);
    },
    scaled(120_000),
  );

  it(
    'AGENT_HARNESS_NPM_LAUNCHERS=1 runs the bundle as installed, without the flag',
    async () => {
      const result = await runAttempt({
        paths,
        engine: 'gemini',
        launch: 'start',
        prompt: 'go',
        script,
        hostEnv: { ...process.env, AGENT_HARNESS_NPM_LAUNCHERS: '1' },
      });
      expect(result.completion.state, result.error?.message).toBe('completed');
      const meta = JSON.parse(fs.readFileSync(result.audit.meta, 'utf8'));
      expect(meta.command.launcher).toBeUndefined();
      expect(fs.realpathSync(meta.command.executable)).toBe(bundle);
      const argv = engineArgv(result.runDir);
      expect(argv).not.toContain('--liftoff-only');
      expect(argv.slice(1, 3)).toEqual([meta.command.executable, '-p']);
    },
    scaled(120_000),
  );
});
