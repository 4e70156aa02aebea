/**
 * What every way of running an engine process (split pipes, PTY, `script` passthrough) returns, and the
 * process-group killing they share.
 */

/** The outcome of a process run. Never thrown: a spawn failure is `spawnError`. */
export interface ProcessResult {
  pid: number | null;
  exitCode: number | null;
  signal: string | null;
  timedOut: boolean;
  canceled: boolean;
  durationMs: number;
  spawnError: Error | null;
}

/** Options every runner takes. */
export interface BaseRunOptions {
  file: string;
  args: readonly string[];
  cwd: string;
  /** The whole environment of the child (nothing is inherited). */
  env: Record<string, string>;
  /** Kill the process group after this many ms. */
  timeoutMs?: number;
  /** Kill the process group when aborted. */
  signal?: AbortSignal;
  /** Grace period between SIGTERM and SIGKILL (default 2000 ms). */
  killGraceMs?: number;
  /** Aborted (a second Ctrl-C) after `signal`: skip the rest of the grace period and SIGKILL now. */
  hurry?: AbortSignal;
}

/** Sends `signal` to the process group `pid` (falls back to the process). Ignores ESRCH. */
export function killGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    try {
      process.kill(pid, signal);
    } catch {
      // already gone
    }
  }
}

/**
 * Arms the timeout and the abort signal for a child whose process group is `pid`: SIGTERM to the group, then
 * SIGKILL after the grace period. Returns the state flags and a disarm function.
 */
export function armTermination(
  pid: number,
  options: Pick<BaseRunOptions, 'timeoutMs' | 'signal' | 'killGraceMs' | 'hurry'>,
): { state: { timedOut: boolean; canceled: boolean }; disarm: () => void } {
  const state = { timedOut: false, canceled: false };
  const timers: NodeJS.Timeout[] = [];
  const grace = options.killGraceMs ?? 2000;
  const terminate = (): void => {
    killGroup(pid, 'SIGTERM');
    const timer = setTimeout(() => killGroup(pid, 'SIGKILL'), grace);
    timer.unref();
    timers.push(timer);
  };
  const onHurry = (): void => {
    if (state.timedOut || state.canceled) killGroup(pid, 'SIGKILL');
  };
  options.hurry?.addEventListener('abort', onHurry);
  if (options.timeoutMs !== undefined) {
    const timer = setTimeout(() => {
      state.timedOut = true;
      terminate();
    }, options.timeoutMs);
    timer.unref();
    timers.push(timer);
  }
  const onAbort = (): void => {
    state.canceled = true;
    terminate();
  };
  if (options.signal?.aborted) onAbort();
  else options.signal?.addEventListener('abort', onAbort, { once: true });
  return {
    state,
    disarm: () => {
      for (const timer of timers) clearTimeout(timer);
      options.signal?.removeEventListener('abort', onAbort);
      options.hurry?.removeEventListener('abort', onHurry);
    },
  };
}
