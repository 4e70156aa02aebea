/**
 * PTY mode with @lydell/node-pty (prebuilt node-pty, shared/research/vitest.md §6): one merged CRLF stream, as
 * a terminal shows it, plus util-linux `script` classic timing lines ("<seconds since previous chunk> <bytes>").
 * node-pty makes the child a session leader, so its pid is a process group and timeout/abort kill the whole
 * group. node-pty reports a failed exec as output plus exit code 1, so the executable and cwd are checked first.
 */
import fs from 'node:fs';
import { constants as osConstants } from 'node:os';
import path from 'node:path';
import { notStarted } from './process.js';
import { armTermination, type BaseRunOptions, type ProcessResult } from './process-result.js';

/** Options of {@link runPty}. */
export interface RunPtyOptions extends BaseRunOptions {
  /** Text written to the terminal once, right after start. */
  input?: string;
  /** Terminal width (default 120). */
  cols?: number;
  /** Terminal height (default 40). */
  rows?: number;
  /** Raw output chunks (stream is always `pty`). */
  onChunk?: (stream: 'pty', chunk: Buffer) => void;
  /** One timing line per chunk, util-linux `script` classic format: `"<seconds, 6 decimals> <bytes>"`. */
  onTiming?: (line: string) => void;
}

/** An Error shaped like Node's spawn errors (`code`, `path`, `syscall`). */
function spawnError(message: string, code: string, file: string): Error {
  return Object.assign(new Error(message), { code, errno: code, path: file, syscall: 'spawn' });
}

/** True when `file` is an executable regular file. */
function isExecutable(file: string): boolean {
  try {
    fs.accessSync(file, fs.constants.X_OK);
    return fs.statSync(file).isFile();
  } catch {
    return false;
  }
}

/**
 * Why `file` could not be started in `cwd` with `env`, or null when it can: execvp's lookup (a name with a
 * slash is a path relative to cwd, anything else is searched on the child's PATH).
 */
export function checkSpawnable(file: string, cwd: string, env: Record<string, string>): Error | null {
  let cwdIsDir = false;
  try {
    cwdIsDir = fs.statSync(cwd).isDirectory();
  } catch {
    // missing
  }
  if (!cwdIsDir) return spawnError(`spawn ${file} ENOENT: working directory ${cwd} does not exist`, 'ENOENT', file);
  if (file.includes('/')) {
    return isExecutable(path.resolve(cwd, file)) ? null : spawnError(`spawn ${file} ENOENT`, 'ENOENT', file);
  }
  // glibc's execvp searches /bin:/usr/bin when PATH is unset.
  const dirs = (env.PATH ?? '/bin:/usr/bin').split(path.delimiter).map((dir) => path.resolve(cwd, dir || '.'));
  return dirs.some((dir) => isExecutable(path.join(dir, file)))
    ? null
    : spawnError(`spawn ${file} ENOENT (PATH=${env.PATH ?? ''})`, 'ENOENT', file);
}

/** The name node-pty gives the terminal (and `TERM`) when the environment names none. */
const DEFAULT_TERM = 'xterm-256color';

/**
 * `env` as node-pty gives it to the process it starts in `cwd` (`PWD`, and `TERM` when unset): what an engine gets
 * when the PTY's own process is the namespaces' init, which passes the engine exactly the environment it is sent.
 */
export function ptyEnv(env: Record<string, string>, cwd: string): Record<string, string> {
  return { ...env, PWD: cwd, TERM: env.TERM ?? DEFAULT_TERM };
}

/** `SIGTERM` for 15 and so on (node-pty reports signals as numbers). */
function signalNameOf(signal: number): string {
  const entry = Object.entries(osConstants.signals).find(([, value]) => value === signal);
  return entry ? entry[0] : `SIG${signal}`;
}

/** What node-pty's UnixTerminal has at run time beyond `IPty`: the master's fd, and its socket's events. */
interface UnixTerminal {
  fd: number;
  on(event: 'end', listener: () => void): void;
}

/**
 * Gives `onData` what is left in the terminal once node-pty's socket has ended. libuv ends a stream at the
 * first short read after the terminal hung up (POLLHUP), so the last bytes a process wrote just before it exited
 * can still be in the master when the socket ends (node-pty #72, #85; seen here on a loaded machine). The master's
 * fd is still open when `end` is emitted, and the kernel answers EIO only once nothing is left to read.
 */
function drainOnEnd(child: UnixTerminal, onData: (chunk: Buffer) => void): void {
  child.on('end', () => {
    const buffer = Buffer.allocUnsafe(64 * 1024);
    for (;;) {
      let read: number;
      try {
        read = fs.readSync(child.fd, buffer);
      } catch {
        return; // EIO: nothing left; EAGAIN: a grandchild still holds the terminal
      }
      if (read <= 0) return;
      onData(Buffer.from(buffer.subarray(0, read)));
    }
  });
}

/** SIGKILL to what is left of the session's process group once its leader has exited. */
function sweepGroup(pgid: number): void {
  try {
    process.kill(-pgid, 'SIGKILL');
  } catch {
    // ESRCH: the group is empty
  }
}

/**
 * Runs `file args` in a pseudo-terminal with `env` (node-pty adds `PWD` and `TERM`, default
 * `xterm-256color`). Never throws: a missing executable or cwd is `spawnError`. The exit is reported after
 * node-pty drained the terminal (at most ~200 ms when a grandchild holds it), then the group is swept.
 */
export async function runPty(options: RunPtyOptions): Promise<ProcessResult> {
  const started = performance.now();
  if (options.signal?.aborted) return notStarted(started, null, true);
  const unspawnable = checkSpawnable(options.file, options.cwd, options.env);
  if (unspawnable) return notStarted(started, unspawnable);
  let child: import('@lydell/node-pty').IPty;
  try {
    const pty = await import('@lydell/node-pty');
    child = pty.spawn(options.file, [...options.args], {
      name: options.env.TERM ?? DEFAULT_TERM,
      cols: options.cols ?? 120,
      rows: options.rows ?? 40,
      cwd: options.cwd,
      env: options.env,
      encoding: null,
    });
  } catch (error) {
    return notStarted(started, error instanceof Error ? error : new Error(String(error)));
  }
  const pid = child.pid;
  const termination = armTermination(pid, options);
  let last = started;
  const onData = (data: string | Buffer): void => {
    const chunk = Buffer.isBuffer(data) ? data : Buffer.from(data);
    const now = performance.now();
    options.onTiming?.(`${((now - last) / 1000).toFixed(6)} ${chunk.byteLength}`);
    last = now;
    options.onChunk?.('pty', chunk);
  };
  child.onData(onData);
  drainOnEnd(child as unknown as UnixTerminal, onData);
  const exit = new Promise<{ exitCode: number; signal?: number }>((resolve) => child.onExit(resolve));
  if (options.input !== undefined) child.write(options.input);
  const { exitCode, signal } = await exit;
  termination.disarm();
  sweepGroup(pid);
  const signalName = signal ? signalNameOf(signal) : null;
  return {
    pid,
    exitCode: signalName ? null : exitCode,
    signal: signalName,
    timedOut: termination.state.timedOut,
    canceled: termination.state.canceled,
    durationMs: performance.now() - started,
    spawnError: null,
  };
}
