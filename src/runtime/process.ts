/**
 * Split-stream mode: stdout and stderr on separate pipes, raw chunks handed over as they arrive.
 *
 * The child leads its own process group (`detached`), and timeout/abort kill the whole group: execa's own
 * timeout signals only the direct child and then waits for pipes a grandchild still holds
 * (shared/research/vitest.md §7). After the child exits, the pipes get a short bound to drain; then whatever is
 * left of the group is killed and the pipes are closed, so the promise always settles and nothing keeps running.
 *
 * The child is started with Node's `spawn`, not execa (the project's process library, which the git calls use): of
 * execa this needs nothing that `spawn` lacks (no buffering, no rejection, no cleanup of a detached child), and a
 * command's only attempt saved ~8 ms by not loading it and not setting up its streams before its engine starts
 * (issue 13).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import type { Socket } from 'node:net';
import type { Readable, Writable } from 'node:stream';
import { armTermination, type BaseRunOptions, type ProcessResult } from './process-result.js';

/** Options of {@link runProcess}. */
export interface RunProcessOptions extends BaseRunOptions {
  /**
   * `ignore` closes stdin (the child reads EOF at once; codex waits for it); `{ text }` writes it and closes; `live`
   * keeps the pipe open for the caller ({@link SpawnedSplit.stdin}: an ACP client writes its requests there).
   */
  stdin: 'ignore' | { text: string } | 'live';
  /** Raw output chunks, in arrival order per stream; no decoding, no line splitting. */
  onChunk?: (stream: 'stdout' | 'stderr', chunk: Buffer) => void;
}

/** How long the pipes may stay open after the child exited (a grandchild holding them) before they are closed. */
const PIPE_DRAIN_MS = 1500;

/** Resolves after `ms` without keeping the event loop alive. */
function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}

/**
 * SIGKILL to what is left of the process group `pgid` once its leader has exited. Only the group: the leader's
 * pid is reaped by now and may belong to someone else, so there is no fallback to `kill(pid)`.
 */
function sweepGroup(pgid: number): void {
  try {
    process.kill(-pgid, 'SIGKILL');
  } catch {
    // ESRCH: the group is empty
  }
}

/** The result of a process that never started (`started`: when it was asked to, `performance.now()`). */
export function notStarted(started: number, spawnError: Error | null, canceled = false): ProcessResult {
  return {
    pid: null,
    exitCode: null,
    signal: null,
    timedOut: false,
    canceled,
    durationMs: performance.now() - started,
    spawnError,
  };
}

/**
 * Settles (never rejects) when `child` exited and every pipe or passed socket closed (`{ exitCode, signal }`), or
 * with the error when it never started (ENOENT, a missing cwd, …). An error with a pid (a failed kill) changes
 * nothing.
 */
export function childSettled(
  child: ChildProcess,
): Promise<{ exitCode: number | null; signal: NodeJS.Signals | null } | Error> {
  return new Promise((resolve) => {
    child.once('close', (exitCode, signal) => resolve({ exitCode, signal }));
    child.on('error', (error) => {
      if (child.pid === undefined) resolve(error);
    });
  });
}

/** The spawn error of a child that has no pid (ENOENT, EACCES, a missing cwd, …). */
function toSpawnError(file: string, result: unknown): Error {
  return result instanceof Error ? result : new Error(`Could not start ${file}.`);
}

/** What {@link spawnSplit} needs: the command, its cwd, env and stdin (no callbacks, no timeout yet). */
export type SpawnSplitOptions = Pick<RunProcessOptions, 'file' | 'args' | 'cwd' | 'env' | 'stdin'> & {
  /**
   * Sockets (socketpairs) to pass besides stdio, as the child's descriptors 3, 4, …: {@link SpawnedSplit.passed}
   * holds this process's ends.
   */
  passSockets?: number;
};

/**
 * A child started with split pipes and not yet supervised: nothing reads its pipes (what it writes waits in them)
 * and no timeout runs until {@link superviseSplit} takes it over.
 */
export interface SpawnedSplit {
  /** The command, for messages. */
  readonly file: string;
  /** The process (and group) id, or undefined when it could not start. */
  readonly pid: number | undefined;
  /** Settles (never rejects) when the child exited and its pipes closed, or could not start (then with its error). */
  readonly settled: Promise<unknown>;
  /** The child's pipes; `stdin` only when it was asked for `live` (else it is closed at once). */
  readonly stdin: Writable | null;
  readonly stdout: Readable | null;
  readonly stderr: Readable | null;
  /** This process's ends of the sockets passed as the child's descriptors 3, 4, … (`passSockets`). */
  readonly passed: readonly Socket[];
  /** Registers a listener for the child's exit. */
  onceExit(listener: (code: number | null, signal: string | null) => void): void;
  /** The error for invalid options (`spawn` threw); the child never started. */
  readonly invalid: Error | null;
  /** True until the child exited. */
  running(): boolean;
  /**
   * Whether the child and its pipes keep this process's event loop alive (default true). A child kept in reserve
   * for a later attempt is not held, so a process with nothing else to do still exits.
   */
  hold(held: boolean): void;
}

/**
 * Starts `file args` in its own process group with split stdout/stderr pipes and exactly `env` (nothing
 * inherited), without supervising it: {@link superviseSplit} does. Never throws.
 */
export function spawnSplit(options: SpawnSplitOptions): SpawnedSplit {
  let child: ChildProcess;
  try {
    child = spawn(options.file, [...options.args], {
      cwd: options.cwd,
      env: options.env,
      detached: true,
      stdio: [
        options.stdin === 'ignore' ? 'ignore' : 'pipe',
        'pipe',
        'pipe',
        ...Array.from({ length: options.passSockets ?? 0 }, () => 'pipe' as const),
      ],
    });
  } catch (error) {
    // Invalid options; a command that cannot start is reported through the 'error' event, not by throwing.
    const invalid = error instanceof Error ? error : new Error(String(error));
    return {
      file: options.file,
      pid: undefined,
      settled: Promise.resolve(invalid),
      stdin: null,
      stdout: null,
      stderr: null,
      passed: [],
      onceExit: () => undefined,
      invalid,
      running: () => false,
      hold: () => undefined,
    };
  }
  const settled = childSettled(child);
  if (child.stdin) {
    // A child that exits without reading its input closes the pipe under the write (EPIPE): nothing to report.
    child.stdin.on('error', () => undefined);
    if (options.stdin !== 'live') child.stdin.end(options.stdin === 'ignore' ? undefined : options.stdin.text);
  }
  const passed = child.stdio.slice(3) as Socket[];
  return {
    file: options.file,
    pid: child.pid,
    settled,
    stdin: options.stdin === 'live' ? child.stdin : null,
    stdout: child.stdout,
    stderr: child.stderr,
    passed,
    onceExit: (listener) => {
      if (child.exitCode !== null || child.signalCode !== null) listener(child.exitCode, child.signalCode);
      else child.once('exit', (code, signal) => listener(code, signal));
    },
    invalid: null,
    running: () => child.exitCode === null && child.signalCode === null,
    hold: (held) => {
      for (const handle of [child, child.stdin, child.stdout, child.stderr, ...passed] as Array<{
        ref?: () => void;
        unref?: () => void;
      } | null>) {
        if (held) handle?.ref?.();
        else handle?.unref?.();
      }
    },
  };
}

/**
 * Runs `file args` with split stdout/stderr pipes and exactly `env` (nothing inherited). Never throws: a
 * missing executable or cwd comes back as `spawnError`; a timeout or abort kills the whole process group
 * (SIGTERM, then SIGKILL after `killGraceMs`) and sets `timedOut` / `canceled`.
 */
export async function runProcess(options: RunProcessOptions): Promise<ProcessResult> {
  if (options.signal?.aborted) return notStarted(performance.now(), null, true);
  return superviseSplit(spawnSplit(options), options);
}

/** What {@link superviseSplit} needs besides the child: callbacks, timeout and abort. */
export type SuperviseOptions = Omit<RunProcessOptions, 'file' | 'args' | 'cwd' | 'env' | 'stdin'>;

/**
 * Supervises a child from {@link spawnSplit}: forwards its chunks, arms the timeout and the abort on its process
 * group, and resolves once it exited and its pipes drained (bounded). Never throws.
 */
export async function superviseSplit(subprocess: SpawnedSplit, options: SuperviseOptions): Promise<ProcessResult> {
  const started = performance.now();
  if (subprocess.invalid) return notStarted(started, subprocess.invalid);
  const { settled } = subprocess;
  const pid = subprocess.pid;
  if (pid === undefined) return notStarted(started, toSpawnError(subprocess.file, await settled));

  const forward =
    (stream: 'stdout' | 'stderr') =>
    (chunk: Uint8Array | string): void => {
      options.onChunk?.(stream, Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk));
    };
  subprocess.stdout?.on('data', forward('stdout'));
  subprocess.stderr?.on('data', forward('stderr'));
  const termination = armTermination(pid, options);
  const exit = await new Promise<{ code: number | null; signal: string | null }>((resolve) => {
    subprocess.onceExit((code, signal) => resolve({ code, signal }));
  });
  termination.disarm();
  const { timedOut, canceled } = termination.state;
  // After a timeout/abort nothing of the group may outlive the leader, TERM-ignoring grandchildren included.
  if (timedOut || canceled) sweepGroup(pid);
  const drained = await Promise.race([settled.then(() => true), delay(PIPE_DRAIN_MS).then(() => false)]);
  sweepGroup(pid);
  if (!drained) {
    subprocess.stdout?.destroy();
    subprocess.stderr?.destroy();
    await Promise.race([settled, delay(PIPE_DRAIN_MS)]);
  }
  return {
    pid,
    exitCode: exit.code,
    signal: exit.signal,
    timedOut,
    canceled,
    durationMs: performance.now() - started,
    spawnError: null,
  };
}
