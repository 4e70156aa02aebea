/**
 * Progress of a running attempt on the CLI's stderr (never stdout, which carries the stream or the result). On a
 * terminal, a status line redrawn in place every second (`codex · 3f9a01bc · turn 2 · 3 tool calls · 45s`) and
 * cleared when the attempt ends; in logs (stderr not a terminal, or CI set), one `agent-harness: progress: …`
 * line per interval (AGENT_HARNESS_PROGRESS_INTERVAL_MS, default 30 s). A status line is drawn only when nothing
 * else writes to the terminal during the attempt (views 2 and 3 print after the engine ended; view 1 when stdout is
 * redirected); with view 0 or view 1 on a terminal the engine's output is the progress, and interval lines are used.
 */
import {
  createAttemptProgress,
  isCi,
  formatProgress,
  progressIntervalMs,
  type AttemptProgress,
} from '../core/attempt-progress.js';
import type { IoMode } from '../core/run-attempt.js';
import type { RaspEvent, TranslateMode } from '../protocol/index.js';
import type { CliStreams } from './output.js';

export { isCi };

/** How progress is shown: a status line, a line per interval, or not at all. */
export type ProgressMode = 'status' | 'lines' | 'off';

/** Picks how to show progress for an attempt with this output. */
export function chooseProgressMode(options: {
  stderrIsTTY: boolean;
  stdoutIsTTY: boolean;
  ci: boolean;
  translate: TranslateMode;
  io: IoMode | undefined;
}): ProgressMode {
  // Live passthrough: the engine owns the terminal.
  if (options.io === 'passthrough') return 'off';
  if (!options.stderrIsTTY || options.ci) return 'lines';
  const quietStdout = options.translate >= 2 || (options.translate === 1 && !options.stdoutIsTTY);
  return quietStdout ? 'status' : 'lines';
}

/** Progress shown while an attempt runs; `stop()` clears the status line before the result is printed. */
export interface CliProgress {
  /** Takes the next live RASP event. */
  observe(event: RaspEvent): void;
  /** Names the attempt (its run handle, once known). */
  setLabel(label: string): void;
  /** Clears the status line (before other stderr output); the next redraw shows it again. */
  clear(): void;
  /** Stops the timer and clears the status line. */
  stop(): void;
}

const CLEAR_LINE = '\r\u001b[2K';
const STATUS_REDRAW_MS = 1000;

/** Starts showing the progress of an attempt of `engine` on `streams.stderr`. */
export function startCliProgress(
  streams: CliStreams,
  engine: string,
  mode: ProgressMode,
  intervalMs: number = progressIntervalMs(),
): CliProgress {
  const progress: AttemptProgress = createAttemptProgress(engine);
  if (mode === 'off')
    return { observe: () => undefined, setLabel: () => undefined, clear: () => undefined, stop: () => undefined };
  let shown = false;
  const draw = (): void => {
    const line = formatProgress(progress.snapshot());
    if (mode === 'status') {
      streams.stderr.write(`${CLEAR_LINE}${line}`);
      shown = true;
    } else streams.stderr.write(`agent-harness: progress: ${line}\n`);
  };
  const timer = setInterval(draw, mode === 'status' ? STATUS_REDRAW_MS : intervalMs);
  timer.unref();
  return {
    observe: (event) => progress.observe(event),
    setLabel: (value) => progress.setLabel(value),
    clear() {
      if (shown) streams.stderr.write(CLEAR_LINE);
      shown = false;
    },
    stop() {
      clearInterval(timer);
      this.clear();
    },
  };
}
