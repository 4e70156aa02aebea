/**
 * The live event stream of one attempt: its RASP events as the engine produces them (the first arrives long before
 * the process exits), each followed by the FCMP events it gave (`translate/attempt-events.ts`: the one order every
 * view maps from), then the attempt's result. Built once here and used by the providers (seed 003) and any live
 * view; the CLI and the fixtures keep calling runAttempt directly.
 */
import type { AttemptEvent } from '../translate/attempt-events.js';
import type { AttemptResult } from './attempt-result.js';
import type { AttemptRequest } from './attempt-request.js';
import { runAttempt } from './run-attempt.js';

/** An attempt in progress: iterate its RASP and FCMP events (`isFcmpEvent` tells them apart); `result` settles when it ends. */
export interface AttemptStream extends AsyncIterable<AttemptEvent> {
  readonly result: Promise<AttemptResult>;
}

/**
 * Starts an attempt and streams its RASP and FCMP events. The iterator ends after the last event of a finished attempt, and
 * throws the attempt's error if it failed before producing a result (bad request, missing run). Events are queued
 * unboundedly in memory only while nobody reads them; a reader that keeps up holds one at a time.
 */
export function streamAttempt(request: AttemptRequest): AttemptStream {
  const queue: AttemptEvent[] = [];
  let wake: (() => void) | null = null;
  let finished = false;
  const notify = (): void => {
    wake?.();
    wake = null;
  };
  const result = runAttempt({
    ...request,
    onRaspEvent: (event) => {
      request.onRaspEvent?.(event);
      queue.push(event);
      notify();
    },
    onFcmpEvent: (event) => {
      request.onFcmpEvent?.(event);
      queue.push(event);
      notify();
    },
  }).finally(() => {
    finished = true;
    notify();
  });
  // The iterator reports a failure itself; an unobserved `result` must not become an unhandled rejection.
  result.catch(() => undefined);
  return {
    result,
    async *[Symbol.asyncIterator]() {
      for (;;) {
        while (queue.length > 0) yield queue.shift()!;
        if (finished) {
          await result;
          return;
        }
        await new Promise<void>((resolve) => {
          wake = resolve;
        });
      }
    },
  };
}
