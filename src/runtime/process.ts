/**
 * Split-stream mode: stdout and stderr on separate pipes, raw chunks handed over as they arrive.
 *
 * The child leads its own process group (`detached`), and timeout/abort kill the whole group: execa's own
 * timeout signals only the direct child and then waits for pipes a grandchild still holds
 * (shared/research/vitest.md §7). After the child exits, the pipes get a short bound to drain, then are closed.
 */
import { execa } from 'execa';
import { armTermination, killGroup, type BaseRunOptions, type ProcessResult } from './process-result.js';

/** Options of {@link runProcess}. */
export interface RunProcessOptions extends BaseRunOptions {
  /** `ignore` closes stdin (codex waits for EOF otherwise); `{ text }` writes it and closes. */
  stdin: 'ignore' | { text: string };
  /** Raw output chunks, in arrival order per stream. */
  onChunk?: (stream: 'stdout' | 'stderr', chunk: Buffer) => void;
}

/** How long pipes may stay open after the child exited (a grandchild holding them) before they are closed. */
const PIPE_DRAIN_MS = 1500;

/** Runs a process with split pipes; never throws. */
export async function runProcess(options: RunProcessOptions): Promise<ProcessResult> {
  const started = performance.now();
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
      ...(options.stdin === 'ignore' ? { stdin: 'ignore' as const } : { input: options.stdin.text }),
    });
  } catch (error) {
    return { pid: null, exitCode: null, signal: null, timedOut: false, canceled: false, durationMs: performance.now() - started, spawnError: error as Error };
  }
  const pid = subprocess.pid ?? null;
  subprocess.stdout?.on('data', (chunk: Buffer) => options.onChunk?.('stdout', chunk));
  subprocess.stderr?.on('data', (chunk: Buffer) => options.onChunk?.('stderr', chunk));
  const termination = pid !== null ? armTermination(pid, options) : null;
  // The child's own exit, independent of the pipes.
  const exited = new Promise<{ code: number | null; signal: string | null }>((resolve) => {
    subprocess.once('exit', (code, signal) => resolve({ code, signal }));
    subprocess.once('error', () => resolve({ code: null, signal: null }));
  });
  const settled = subprocess.then((result) => result, (error: unknown) => error);
  const exit = await exited;
  // Give the pipes a bounded time to drain; a grandchild holding them gets its group killed.
  let drainTimer: NodeJS.Timeout | undefined;
  const drained = await Promise.race([
    settled.then(() => true),
    new Promise<boolean>((resolve) => {
      drainTimer = setTimeout(() => resolve(false), PIPE_DRAIN_MS);
    }),
  ]);
  clearTimeout(drainTimer);
  if (!drained) {
    if (pid !== null) killGroup(pid, 'SIGKILL');
    subprocess.stdout?.destroy();
    subprocess.stderr?.destroy();
    await Promise.race([settled, new Promise((resolve) => setTimeout(resolve, PIPE_DRAIN_MS).unref())]);
  }
  termination?.disarm();
  const result = (await Promise.race([settled, Promise.resolve(null)])) as { failed?: boolean; code?: string; cause?: unknown; exitCode?: number } | null;
  const spawnError = pid === null || (result && result.failed && result.exitCode === undefined && exit.code === null && exit.signal === null)
    ? ((result as { cause?: Error } | null)?.cause ?? new Error(`could not start ${options.file}`))
    : null;
  return {
    pid,
    exitCode: spawnError ? null : exit.code,
    signal: exit.signal,
    timedOut: termination?.state.timedOut ?? false,
    canceled: termination?.state.canceled ?? false,
    durationMs: performance.now() - started,
    spawnError: spawnError instanceof Error ? spawnError : spawnError ? new Error(String(spawnError)) : null,
  };
}
