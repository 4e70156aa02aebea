/**
 * Qwen Code's npm package (`@qwen-code/qwen-code` 0.24.4) installs `cli-entry.js`, a Node launcher: it stamps a few
 * variables (`QWEN_CODE_CLI`, its own path; `QWEN_CODE_STARTUP_VERSION`, the package's version) and `spawnSync`s
 * `node --expose-gc cli.js ARGS` in a child, the CLI itself. The harness starts that child itself, as the launcher
 * would, with one more V8 flag, `--liftoff-only`:
 *
 * - qwen parses every shell command the model asks for with tree-sitter's bash grammar, a WebAssembly module. V8 first
 *   compiles it with Liftoff, its baseline WebAssembly compiler, then recompiles the hot functions with TurboFan on
 *   background threads, and the grammar's parse and lex functions are huge: about 3.2 s of the 6.9 s of CPU of an
 *   attempt that runs one shell command (median of 4 paired scripted attempts, 3.65 s with the flag). A parse takes
 *   milliseconds either way. The flag changes which compiler runs, nothing qwen does; Node refuses it in
 *   `NODE_OPTIONS`, and the launcher passes its child no flag of its own, hence the stand-in.
 * - One Node process instead of two.
 *
 * What the launcher also does and the stand-in does not: read `QWEN_HOME` from `~/.qwen/.env` or `~/.env`, and run a
 * newer `cli.js` that `qwen update` installed under `~/.qwen/updates/npm` (the run's HOME is the harness's own, auto
 * update is off in the run's settings, so neither exists unless an agent wrote it; the stand-in runs the pinned
 * package). Only a layout it recognises is stood in for (`cli-entry.js` beside `cli.js` in a package named
 * `@qwen-code/qwen-code`); anything else runs as installed, and `AGENT_HARNESS_NPM_LAUNCHERS=1` always does. The meta
 * records both (`command.executable` is Node, `command.argv` starts with the flags and `cli.js`, `command.launcher` is
 * `cli-entry.js`).
 */
import fs from 'node:fs';
import path from 'node:path';
import { installedPackageFile } from '../package-files.js';
import type { NativeLaunch } from '../engine.js';

/**
 * The V8 flags the CLI runs with: the launcher's `--expose-gc`, and WebAssembly compiled by Liftoff only (see the
 * file comment).
 */
export const QWEN_NODE_FLAGS: readonly string[] = ['--expose-gc', '--liftoff-only'];

/** Node running qwen's `cli.js` as its launcher would (plus `--liftoff-only`) when `executable` is it; null otherwise. */
export function resolveQwenNativeLaunch(executable: string): NativeLaunch | null {
  const installed = installedPackageFile(executable, '@qwen-code/qwen-code', 'cli-entry.js');
  const version = installed?.manifest.version;
  if (!installed || typeof version !== 'string') return null;
  const { file: launcher, root: packageRoot } = installed;
  const cli = path.join(packageRoot, 'cli.js');
  if (!fs.existsSync(cli)) return null;
  return {
    file: process.execPath,
    args: [...QWEN_NODE_FLAGS, cli],
    env: { QWEN_CODE_CLI: launcher, QWEN_CODE_STARTUP_VERSION: version },
    launcher,
  };
}
