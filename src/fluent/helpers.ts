/** The contextual event wrappers of seed 002: phase, task, retry and parallel. */
import { describeError, type EventBus } from './events.js';
import { mapAtMost } from '../runtime/map-at-most.js';

/** Options for `retry()`. */
export interface RetryOptions {
  /** Maximum attempts (default 3). */
  retries?: number;
  /** First backoff delay in ms (default 1000); doubles each attempt. */
  minTimeout?: number;
  /** Cap on the backoff delay in ms (default 5000). */
  maxTimeout?: number;
}

/** Options for `parallel()`. */
export interface ParallelOptions {
  /** Maximum functions running at once (default 5). */
  concurrency?: number;
}

/**
 * The canonical wrapper for `phase` and `task`: start before, complete with the result or failed with
 * message/stack/cause after, always re-throw. Inner helpers finish before this emits, so inner events precede
 * outer ones. Task events also carry `id` (the task's name).
 */
export async function wrapWithEvents<T>(
  bus: EventBus,
  prefix: 'phase' | 'task',
  name: string,
  fn: () => Promise<T>,
): Promise<T> {
  const extra = prefix === 'task' ? { id: name } : {};
  const emit = (suffix: 'start' | 'complete' | 'failed', data: Record<string, unknown>): void => {
    // One cast for both prefixes: the fields are those of PhaseEvent / TaskEvent.
    (bus.emit as (type: string, data: Record<string, unknown>) => void).call(bus, `${prefix}:${suffix}`, {
      name,
      ...extra,
      status: suffix,
      ...data,
    });
  };
  emit('start', {});
  try {
    const result = await fn();
    emit('complete', { result });
    return result;
  } catch (error) {
    emit('failed', describeError(error));
    throw error;
  }
}

/** Backoff before attempt `attempt + 1`: minTimeout · 2^(attempt-1), capped at maxTimeout. */
export function computeBackoff(attempt: number, minTimeout: number, maxTimeout: number): number {
  return Math.min(maxTimeout, minTimeout * 2 ** (attempt - 1));
}

/** Runs `fn` up to `retries` times with capped exponential backoff, emitting the retry:* sequence. */
export async function runRetry<T>(
  bus: EventBus,
  name: string,
  fn: () => Promise<T>,
  options: RetryOptions = {},
): Promise<T> {
  const maxAttempts = Math.max(1, Math.floor(options.retries ?? 3));
  const minTimeout = options.minTimeout ?? 1000;
  const maxTimeout = Math.max(minTimeout, options.maxTimeout ?? 5000);
  bus.emit('retry:start', { name, maxAttempts });
  for (let attempt = 1; ; attempt += 1) {
    bus.emit('retry:attempt', { name, attempt, maxAttempts });
    try {
      const result = await fn();
      bus.emit('retry:success', { name, attempt, result });
      return result;
    } catch (error) {
      const described = describeError(error);
      if (attempt >= maxAttempts) {
        bus.emit('retry:failure', { name, attempts: attempt, ...described });
        throw error;
      }
      const delay = computeBackoff(attempt, minTimeout, maxTimeout);
      bus.emit('retry:backoff', { name, attempt, delay, error: described.error });
      // Global setTimeout (not timers/promises) so callers' fake timers control the backoff.
      await new Promise<void>((resolve) => setTimeout(resolve, delay));
    }
  }
}

/**
 * Runs `fns` with at most `concurrency` in flight, results in input order. The first failure is re-thrown after
 * the items already running settle (no new ones start), so nothing keeps running behind the caller's back.
 */
export async function runParallel<T>(
  bus: EventBus,
  name: string,
  fns: Array<() => Promise<T>>,
  options: ParallelOptions = {},
): Promise<T[]> {
  const total = fns.length;
  const concurrency = Math.max(1, Math.floor(options.concurrency ?? 5));
  bus.emit('parallel:start', { name, total, concurrency });
  let completed = 0;
  let results: T[];
  try {
    results = await mapAtMost(fns, concurrency, async (fn, index) => {
      let result: T;
      try {
        result = await fn();
      } catch (error) {
        bus.emit('parallel:item:failed', { name, index, total, ...describeError(error) });
        throw error;
      }
      completed += 1;
      bus.emit('parallel:item:complete', { name, index, completed, total });
      return result;
    });
  } catch (error) {
    bus.emit('parallel:failed', { name, total, completed, ...describeError(error) });
    throw error;
  }
  bus.emit('parallel:complete', { name, total, result: results });
  return results;
}
