/**
 * gemini-cli's npm package (`@google/gemini-cli` 0.61.0) installs `bundle/gemini.js`, a Node ES module run by its
 * `#!/usr/bin/env node` line. The harness starts it with Node itself (the harness's own, `process.execPath`) and one
 * V8 flag, `--liftoff-only`: the script, argv and env are the same.
 *
 * Why: gemini checks every shell command the model asks for with tree-sitter's bash grammar, a WebAssembly module
 * (the policy engine's `checkShellCommand`, the shell tool's own parse). V8 first compiles it with Liftoff, its
 * baseline WebAssembly compiler, then recompiles the functions that run hot with TurboFan on background threads, and
 * the grammar's parse and lex functions are huge: that recompilation cost about 1.9 s of CPU per attempt that runs a
 * shell command, nearly half of it (median of 5 paired scripted attempts with one `echo` on the 2-core machine:
 * 4.05 s user+sys as installed, 2.18 s with Liftoff only). A parse takes milliseconds either way. The flag changes
 * which compiler runs, nothing gemini does; Node refuses it in `NODE_OPTIONS`, hence the command line.
 *
 * Only a layout it recognises is stood in for (the bundle's `gemini.js` under a package named
 * `@google/gemini-cli`); anything else runs as installed, and `AGENT_HARNESS_NPM_LAUNCHERS=1` always does. The meta
 * records both (`command.executable` is Node, `command.argv` starts with the flag and the script, `command.launcher`
 * is the script).
 */
import { installedPackageFile } from '../package-files.js';
import type { NativeLaunch } from '../engine.js';

/** The V8 flags gemini runs with: WebAssembly compiled by Liftoff only (no TurboFan tier-up; see the file comment). */
export const GEMINI_NODE_FLAGS: readonly string[] = ['--liftoff-only'];

/** Node with {@link GEMINI_NODE_FLAGS} running gemini's bundle when `executable` is it; null otherwise. */
export function resolveGeminiNativeLaunch(executable: string): NativeLaunch | null {
  const script = installedPackageFile(executable, '@google/gemini-cli', 'bundle/gemini.js')?.file;
  return script ? { file: process.execPath, args: [...GEMINI_NODE_FLAGS, script], env: {}, launcher: script } : null;
}
