/**
 * Split-stream mode: stdout and stderr on separate pipes, raw chunks handed over as they arrive.
 *
 * The child leads its own process group (`detached`), and timeout/abort kill the whole group: execa's own
 * timeout signals only the direct child and then waits for pipes a grandchild still holds
 * (shared/research/vitest.md §7). After the child exits, the pipes get a short bound to drain; then whatever is
 * left of the group is killed and the pipes are closed, so the promise always settles and nothing keeps running.
 */
import { execa } from 'execa';
import { armTermination, type BaseRunOptions, type ProcessResult } from './process-result.js';

/** Options of {@link runProcess}. */
export interface RunProcessOptions extends BaseRunOptions {
  /** `ignore` closes stdin (the child reads EOF at once; codex waits for it); `{ text }` writes it and closes. */
  stdin: 'ignore' | { text: string };
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

/** The result of a process that never started. */
function notStarted(started: number, spawnError: Error | null, canceled = false): ProcessResult {
  return { pid: null, exitCode: null, signal: null, timedOut: false, canceled, durationMs: performance.now() - started, spawnError };
}

/** The spawn error execa reports for a child that has no pid (ENOENT, EACCES, a missing cwd, …). */
function toSpawnError(file: string, result: unknown): Error {
  const cause = (result as { cause?: unknown } | null)?.cause;
  if (cause instanceof Error) return cause;
  if (result instanceof Error) return result;
  const message = (result as { shortMessage?: string } | null)?.shortMessage;
  return new Error(message ?? `Could not start ${file}.`);
}

/**
 * Runs `file args` with split stdout/stderr pipes and exactly `env` (nothing inherited). Never throws: a
 * missing executable or cwd comes back as `spawnError`; a timeout or abort kills the whole process group
 * (SIGTERM, then SIGKILL after `killGraceMs`) and sets `timedOut` / `canceled`.
 */
export async function runProcess(options: RunProcessOptions): Promise<ProcessResult> {
  const started = performance.now();
  if (options.signal?.aborted) return notStarted(started, null, true);
  let subprocess;
  try {
    subprocess = execa(options.file, [...options.args], {
      cwd: options.cwd,
      env: options.env,
      extendEnv: false,
      detached: true,
      buffer: false,
      reject: false,
      stripFinalNewline: false,
      encoding: 'buffer',
      stdout: 'pipe',
      stderr: 'pipe',
      ...(options.stdin === 'ignore' ? { stdin: 'ignore' as const } : { input: options.stdin.text }),
    });
  } catch (error) {
    // Invalid options; execa reports spawn failures through the promise, not by throwing.
    return notStarted(started, error instanceof Error ? error : new Error(String(error)));
  }
  const settled: Promise<unknown> = subprocess.then((result) => result, (error: unknown) => error);
  const pid = subprocess.pid;
  if (pid === undefined) return notStarted(started, toSpawnError(options.file, await settled));

  const forward = (stream: 'stdout' | 'stderr') => (chunk: Uint8Array | string): void => {
    options.onChunk?.(stream, Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk));
  };
  subprocess.stdout?.on('data', forward('stdout'));
  subprocess.stderr?.on('data', forward('stderr'));
  const termination = armTermination(pid, options);
  const exit = await new Promise<{ code: number | null; signal: string | null }>((resolve) => {
    subprocess.once('exit', (code, signal) => resolve({ code, signal }));
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
