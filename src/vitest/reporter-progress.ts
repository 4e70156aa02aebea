/**
 * The reporter's progress lines: while tests run, one `agent-harness: progress: engine · test · turn · tool calls ·
 * elapsed` line per running attempt, every 5 s on a terminal and every AGENT_HARNESS_PROGRESS_INTERVAL_MS (default
 * 30 s) in CI logs (CI set or stderr not a terminal). Nothing is printed while no attempt runs.
 */
import { formatProgress, isCi, progressIntervalMs } from '../core/attempt-progress.js';
import type { ProgressHub } from './progress-channel.js';

/** Interval of the progress lines on a terminal. */
export const TERMINAL_PROGRESS_INTERVAL_MS = 5_000;

/** Starts printing the hub's running attempts to `out`; returns the function that stops it. */
export function startReporterProgress(
  hub: ProgressHub,
  out: NodeJS.WritableStream & { isTTY?: boolean } = process.stderr,
  env: NodeJS.ProcessEnv = process.env,
): () => void {
  const interval = progressIntervalMs(env);
  const terminal = Boolean(out.isTTY) && !isCi(env);
  const timer = setInterval(
    () => {
      const now = Date.now();
      for (const attempt of hub.running.values())
        out.write(
          `agent-harness: progress: ${formatProgress({
            engine: attempt.engine,
            label: attempt.label,
            turn: attempt.turn,
            toolCalls: attempt.toolCalls,
            elapsedMs: now - attempt.since,
          })}\n`,
        );
    },
    terminal ? Math.min(interval, TERMINAL_PROGRESS_INTERVAL_MS) : interval,
  );
  timer.unref();
  return () => clearInterval(timer);
}
