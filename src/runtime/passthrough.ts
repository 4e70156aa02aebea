/**
 * Live passthrough for a real terminal (seed 001, Decision 6): when the view is 0 and stdin, stdout and
 * stderr are all TTYs, the engine runs interactively and util-linux `script` records it:
 * `script -q -e --log-out F --log-timing T -c CMD` — no positional typescript argument (Decision 7: it
 * conflicts with --log-out across util-linux versions). `-e` makes `script` return the child's exit code.
 */
import fs from 'node:fs';
import path from 'node:path';
import { execa } from 'execa';
import { armTermination, type BaseRunOptions, type ProcessResult } from './process-result.js';

/** Options of {@link runPassthrough}. */
export interface RunPassthroughOptions extends BaseRunOptions {
  /** Where `script` writes the terminal output. */
  logOut: string;
  /** Where `script` writes the timing log. */
  logTiming: string;
}

/** POSIX single-quoting: the shell sees the value literally. */
export function shellQuote(value: string): string {
  return /^[A-Za-z0-9_@%+=:,./-]+$/.test(value) ? value : `'${value.replace(/'/g, `'\\''`)}'`;
}

/** The argv of `script` (without the `script` executable itself). */
export function buildScriptArgs(file: string, args: readonly string[], logOut: string, logTiming: string): string[] {
  const command = [file, ...args].map(shellQuote).join(' ');
  return ['-q', '-e', '--log-out', logOut, '--log-timing', logTiming, '-c', command];
}

/** Path of util-linux `script`, or null when it is not installed. */
export function findScriptBinary(searchPath: string | undefined = process.env.PATH): string | null {
  for (const dir of (searchPath ?? '').split(path.delimiter).filter(Boolean)) {
    const candidate = path.join(dir, 'script');
    try {
      fs.accessSync(candidate, fs.constants.X_OK);
      return candidate;
    } catch {
      // keep looking
    }
  }
  return null;
}

/** True when the engine should run live: view 0 and all three standard streams are terminals. */
export function shouldUsePassthrough(state: { translate: number; stdinIsTTY: boolean; stdoutIsTTY: boolean; stderrIsTTY: boolean }): boolean {
  return state.translate === 0 && state.stdinIsTTY && state.stdoutIsTTY && state.stderrIsTTY;
}

/** Runs the engine under `script` with the terminal inherited; never throws. */
export async function runPassthrough(options: RunPassthroughOptions & { stdin?: 'inherit' | 'ignore' }): Promise<ProcessResult> {
  const started = performance.now();
  const script = findScriptBinary(options.env.PATH) ?? findScriptBinary();
  if (!script) {
    return { pid: null, exitCode: null, signal: null, timedOut: false, canceled: false, durationMs: 0, spawnError: new Error('util-linux `script` was not found on PATH') };
  }
  const subprocess = execa(script, buildScriptArgs(options.file, options.args, options.logOut, options.logTiming), {
    cwd: options.cwd,
    env: options.env,
    extendEnv: false,
    detached: false,
    reject: false,
    stdin: options.stdin ?? 'inherit',
    stdout: 'inherit',
    stderr: 'inherit',
  });
  const termination = subprocess.pid !== undefined ? armTermination(subprocess.pid, { ...options, killGraceMs: options.killGraceMs ?? 2000 }) : null;
  const result = await subprocess;
  termination?.disarm();
  const spawnFailed = subprocess.pid === undefined;
  return {
    pid: subprocess.pid ?? null,
    exitCode: spawnFailed ? null : result.exitCode ?? null,
    signal: result.signal ?? null,
    timedOut: termination?.state.timedOut ?? false,
    canceled: termination?.state.canceled ?? false,
    durationMs: performance.now() - started,
    spawnError: spawnFailed ? (result.cause instanceof Error ? result.cause : new Error(result.shortMessage)) : null,
  };
}
