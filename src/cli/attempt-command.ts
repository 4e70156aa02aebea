/**
 * What `start`, `resume` and the direct `<engine>` form share: run one attempt through core with the output
 * contract of output.ts, then turn the result into an exit status.
 */
import process from 'node:process';
import type { AttemptResult } from '../core/attempt-result.js';
import { runAttempt, type AttemptRequest, type IoMode } from '../core/run-attempt.js';
import type { TranslateMode } from '../protocol/index.js';
import { shouldUsePassthrough } from '../runtime/passthrough.js';
import { reportCliError, exitStatusFor } from './errors.js';
import { liveHandlers, printFinished, printReady, type CliStreams } from './output.js';

/** Picks the terminal wiring: live passthrough only for view 0 on a real terminal (seed 001, Decision 6). */
export function chooseIo(translate: TranslateMode, requested: IoMode | undefined): IoMode {
  if (requested) return requested;
  return shouldUsePassthrough({
    translate,
    stdinIsTTY: Boolean(process.stdin.isTTY),
    stdoutIsTTY: Boolean(process.stdout.isTTY),
    stderrIsTTY: Boolean(process.stderr.isTTY),
  }) ? 'passthrough' : 'split';
}

/** Runs one attempt for the CLI; returns the exit status to use and the attempt's result. */
export async function runAttemptCommand(
  streams: CliStreams,
  request: AttemptRequest & { translateMode: TranslateMode },
  verb: 'Start' | 'Resume',
): Promise<{ status: number; result: AttemptResult }> {
  let readyPrinted = false;
  const controller = new AbortController();
  const onSignal = (): void => controller.abort();
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  try {
    const result = await runAttempt({
      ...request,
      signal: controller.signal,
      ...liveHandlers(streams, request.translateMode),
      onReady: (info) => {
        readyPrinted = true;
        printReady(streams, info, request.passthrough ?? []);
      },
    });
    printFinished(streams, result, request.translateMode, verb, readyPrinted);
    if (result.error) {
      reportCliError(result.error, streams.stderr);
      return { status: exitStatusFor(result.error.code), result };
    }
    return { status: result.exitCode ?? 1, result };
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
}
