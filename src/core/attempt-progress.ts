/**
 * Progress of a running attempt, counted from its live RASP events: the turn (engine turns started, at least 1
 * once the engine said anything), the distinct tool calls, and the time since the attempt started. One line of
 * text for a terminal's status line or a CI log: `codex · my case · turn 2 · 3 tool calls · 1m05s`.
 */
import type { RaspEvent } from '../protocol/index.js';
import { readIntegerEnv } from '../runtime/integer-setting.js';

/** Environment variable: milliseconds between two progress lines where no terminal shows a status line. */
export const PROGRESS_INTERVAL_ENV = 'AGENT_HARNESS_PROGRESS_INTERVAL_MS';

/** Default interval of the progress lines in logs (CI, no TTY): 30 s. */
export const DEFAULT_PROGRESS_INTERVAL_MS = 30_000;

/** The progress-line interval of `env` (CONFIG_INVALID when set but not a whole number of ms ≥ 10). */
export function progressIntervalMs(env: NodeJS.ProcessEnv = process.env): number {
  return readIntegerEnv(env, PROGRESS_INTERVAL_ENV, {
    fallback: DEFAULT_PROGRESS_INTERVAL_MS,
    min: 10,
    max: 24 * 3_600_000,
    unit: 'ms',
  });
}

/** True when `env` says the process runs in CI (`CI` set, and not "false" or "0"). */
export function isCi(env: NodeJS.ProcessEnv = process.env): boolean {
  const value = env.CI?.trim().toLowerCase();
  return value !== undefined && value !== '' && value !== 'false' && value !== '0';
}

/** What a progress line shows. */
export interface AttemptProgressSnapshot {
  engine: string;
  /** The test or the prompt the attempt runs, when known. */
  label: string | null;
  turn: number;
  toolCalls: number;
  elapsedMs: number;
}

/** Counts an attempt's progress from its RASP events. */
export interface AttemptProgress {
  /** Takes the next live RASP event. */
  observe(event: RaspEvent): void;
  /** Names the attempt (a test's name, a run's handle). */
  setLabel(label: string | null): void;
  /** The counts now. */
  snapshot(now?: number): AttemptProgressSnapshot;
}

/** Starts counting the progress of an attempt of `engine` that starts now (or at `startedAt`). */
export function createAttemptProgress(
  engine: string,
  label: string | null = null,
  startedAt: number = Date.now(),
): AttemptProgress {
  const calls = new Set<string>();
  let turns = 0;
  let active = false;
  return {
    observe(event) {
      const type = event.data.type;
      if (type === 'engine.turn.started') turns += 1;
      else if (type === 'engine.tool.call') calls.add(event.data.call_id);
      if (type.startsWith('engine.')) active = true;
    },
    setLabel(value) {
      label = value;
    },
    snapshot(now = Date.now()) {
      return {
        engine,
        label,
        turn: Math.max(turns, active ? 1 : 0),
        toolCalls: calls.size,
        elapsedMs: Math.max(0, now - startedAt),
      };
    },
  };
}

/** `45s`, `1m05s`, `2h03m`. */
export function formatElapsed(ms: number): string {
  const s = Math.floor(ms / 1000);
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m${String(s % 60).padStart(2, '0')}s`;
  return `${Math.floor(m / 60)}h${String(m % 60).padStart(2, '0')}m`;
}

/** One progress line: engine · label · turn · tool calls · elapsed (the label only when known). */
export function formatProgress(p: AttemptProgressSnapshot): string {
  const parts = [p.engine];
  if (p.label) parts.push(p.label.length > 60 ? `${p.label.slice(0, 57)}...` : p.label);
  parts.push(p.turn > 0 ? `turn ${p.turn}` : 'starting');
  parts.push(`${p.toolCalls} tool call${p.toolCalls === 1 ? '' : 's'}`);
  parts.push(formatElapsed(p.elapsedMs));
  return parts.join(' · ');
}
