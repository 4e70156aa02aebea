/**
 * Live passthrough for a real terminal (seed 001, Decision 6): when the view is 0 and stdin, stdout and
 * stderr are all TTYs, the engine runs interactively and util-linux `script` records it:
 * `script -q -e --log-out F --log-timing T -c CMD` — no positional typescript argument (Decision 7: it
 * conflicts with --log-out across util-linux versions). `-e` makes `script` return the child's exit code.
 *
 * `script` runs CMD with `$SHELL -c` (`/bin/sh` when the env has no SHELL), so CMD is POSIX-quoted and starts
 * with `exec`: the engine replaces the shell and gets the signals `script` forwards to its child.
 */
import { spawn, spawnSync } from 'node:child_process';
import type { Socket } from 'node:net';
import fs from 'node:fs';
import path from 'node:path';
import { childSettled, notStarted } from './process.js';
import type { BaseRunOptions, ProcessResult } from './process-result.js';

/** Options of {@link runPassthrough}. */
export interface RunPassthroughOptions extends BaseRunOptions {
  /** Where `script` writes the terminal output. */
  logOut: string;
  /** Where `script` writes the timing log (classic format). */
  logTiming: string;
  /** The terminal's stdin (default) or none, for running without a terminal (tests). */
  stdin?: 'inherit' | 'ignore';
  /** The terminal's stdout (default) or none; the log gets the output either way. */
  stdout?: 'inherit' | 'ignore';
  /**
   * Sockets (socketpairs) to pass as `script`'s descriptors 3, 4, …, which it hands on to its child; `onPassed`
   * gets this process's ends once it has started (the namespaces' init: `AttemptIsolation.wrap` with `passing`).
   */
  passSockets?: number;
  onPassed?: (sockets: readonly Socket[]) => void;
}

/** POSIX single-quoting: any POSIX shell sees the value literally (`'` becomes `'\''`). */
export function shellQuote(value: string): string {
  return /^[A-Za-z0-9_@%+=:,./-]+$/.test(value) ? value : `'${value.replace(/'/g, `'\\''`)}'`;
}

/** The argv of `script` (without the `script` executable itself) that runs `file args` and logs it. */
export function buildScriptArgs(file: string, args: readonly string[], logOut: string, logTiming: string): string[] {
  const command = ['exec', ...[file, ...args].map(shellQuote)].join(' ');
  return ['-q', '-e', '--log-out', logOut, '--log-timing', logTiming, '-c', command];
}

/** util-linux `script` paths already checked (BSD `script` on macOS has other flags). */
const checkedScripts = new Map<string, boolean>();

/** True when `candidate` is an executable util-linux `script`. */
function isUtilLinuxScript(candidate: string): boolean {
  let known = checkedScripts.get(candidate);
  if (known === undefined) {
    const probe = spawnSync(candidate, ['--version'], {
      encoding: 'utf8',
      timeout: 5000,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    known = probe.status === 0 && `${probe.stdout}${probe.stderr}`.includes('util-linux');
    checkedScripts.set(candidate, known);
  }
  return known;
}

/** Path of util-linux `script` on `searchPath` (default: this process's PATH), or null when there is none. */
export function findScriptBinary(searchPath: string | undefined = process.env.PATH): string | null {
  for (const dir of (searchPath ?? '').split(path.delimiter).filter(Boolean)) {
    const candidate = path.join(dir, 'script');
    try {
      fs.accessSync(candidate, fs.constants.X_OK);
    } catch {
      continue;
    }
    if (isUtilLinuxScript(candidate)) return candidate;
  }
  return null;
}

/** True when the engine should run live: view 0 and all three standard streams are terminals. */
export function shouldUsePassthrough(state: {
  translate: number;
  stdinIsTTY: boolean;
  stdoutIsTTY: boolean;
  stderrIsTTY: boolean;
}): boolean {
  return state.translate === 0 && state.stdinIsTTY && state.stdoutIsTTY && state.stderrIsTTY;
}

/** The children of `pid` (Linux procfs; empty where it is unavailable). */
function childrenOf(pid: number): number[] {
  try {
    return fs.readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').split(/\s+/).filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

function kill(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(pid, signal);
  } catch {
    // already gone
  }
}

/**
 * Timeout and abort for `script`. It stays in the terminal's foreground process group (a group of its own
 * could not read the terminal), so it gets SIGTERM, which it forwards to its child; after the grace period the
 * child's session (the child leads one on script's pty) and `script` itself get SIGKILL.
 */
function armScriptTermination(
  pid: number,
  options: BaseRunOptions,
): { state: { timedOut: boolean; canceled: boolean }; disarm: () => void } {
  const state = { timedOut: false, canceled: false };
  const timers: NodeJS.Timeout[] = [];
  const killNow = (): void => {
    for (const child of childrenOf(pid)) kill(-child, 'SIGKILL');
    kill(pid, 'SIGKILL');
  };
  const terminate = (): void => {
    kill(pid, 'SIGTERM');
    timers.push(setTimeout(killNow, options.killGraceMs ?? 2000).unref());
  };
  options.hurry?.addEventListener(
    'abort',
    () => {
      if (state.timedOut || state.canceled) killNow();
    },
    { once: true },
  );
  if (options.timeoutMs !== undefined) {
    timers.push(
      setTimeout(() => {
        state.timedOut = true;
        terminate();
      }, options.timeoutMs).unref(),
    );
  }
  const onAbort = (): void => {
    state.canceled = true;
    terminate();
  };
  options.signal?.addEventListener('abort', onAbort, { once: true });
  return {
    state,
    disarm: () => {
      for (const timer of timers) clearTimeout(timer);
      options.signal?.removeEventListener('abort', onAbort);
    },
  };
}

/**
 * Runs `file args` under `script` with the terminal inherited and exactly `env`; the output lands in `logOut`
 * (with `script`'s header and footer lines, CRLF) and the timing in `logTiming`. Never throws: a missing
 * `script` is `spawnError`; a missing engine executable is exit code 127 from the shell.
 */
export async function runPassthrough(options: RunPassthroughOptions): Promise<ProcessResult> {
  const started = performance.now();
  if (options.signal?.aborted) return notStarted(started, null, true);
  const script = findScriptBinary(options.env.PATH) ?? findScriptBinary();
  if (!script)
    return notStarted(
      started,
      new Error(
        'util-linux `script` was not found on PATH; install util-linux (Debian: bsdutils) or use the PTY mode.',
      ),
    );
  const subprocess = spawn(script, buildScriptArgs(options.file, options.args, options.logOut, options.logTiming), {
    cwd: options.cwd,
    env: options.env,
    stdio: [
      options.stdin ?? 'inherit',
      options.stdout ?? 'inherit',
      'inherit',
      ...Array.from({ length: options.passSockets ?? 0 }, () => 'pipe' as const),
    ],
  });
  const ended = childSettled(subprocess);
  const pid = subprocess.pid;
  if (pid !== undefined && options.onPassed) options.onPassed(subprocess.stdio.slice(3) as Socket[]);
  const termination = pid === undefined ? null : armScriptTermination(pid, options);
  const result = await ended;
  termination?.disarm();
  if (result instanceof Error) return notStarted(started, result);
  return {
    pid: pid!,
    exitCode: result.exitCode,
    signal: result.signal,
    timedOut: termination?.state.timedOut ?? false,
    canceled: termination?.state.canceled ?? false,
    durationMs: performance.now() - started,
    spawnError: null,
  };
}
