/**
 * What `start`, `resume` and the direct `<engine>` form share: run one attempt through core with the output
 * contract of output.ts, then turn the result into an exit status.
 */
import type { AttemptResult } from '../core/attempt-result.js';
import { runAttempt, type AttemptRequest, type IoMode } from '../core/run-attempt.js';
import type { TranslateMode } from '../protocol/index.js';
import { shouldUsePassthrough } from '../runtime/passthrough.js';
import { reportCliError, exitStatusFor } from './errors.js';
import { signalExitStatus } from './interrupt.js';
import { liveHandlers, printFinished, printReady, type CliStreams } from './output.js';
import { chooseProgressMode, isCi, startCliProgress } from './progress.js';

/** Picks the terminal wiring: live passthrough only for view 0 on a real terminal (seed 001, Decision 6). */
export function chooseIo(translate: TranslateMode, requested: IoMode | undefined): IoMode {
  if (requested) return requested;
  return shouldUsePassthrough({
    translate,
    stdinIsTTY: Boolean(process.stdin.isTTY),
    stdoutIsTTY: Boolean(process.stdout.isTTY),
    stderrIsTTY: Boolean(process.stderr.isTTY),
  })
    ? 'passthrough'
    : 'split';
}

/** Runs one attempt for the CLI; returns the exit status to use and the attempt's result. */
export async function runAttemptCommand(
  streams: CliStreams,
  request: AttemptRequest & { translateMode: TranslateMode },
  verb: 'Start' | 'Resume',
): Promise<{ status: number; result: AttemptResult }> {
  let readyPrinted = false;
  const controller = new AbortController();
  const hurry = new AbortController();
  let interrupted: NodeJS.Signals | null = null;
  // First signal: cancel (SIGTERM to the engine, then the audit is sealed). Second: kill the engine now; the
  // audit is still sealed, never skipped. Later ones only say so.
  const onSignal = (signal: NodeJS.Signals): void => {
    if (!interrupted) {
      interrupted = signal;
      streams.stderr.write(
        `\nagent-harness: ${signal}: stopping the engine and sealing the audit (${signal === 'SIGINT' ? 'Ctrl-C again' : 'again'} to kill it at once)\n`,
      );
      controller.abort();
    } else if (!hurry.signal.aborted) {
      streams.stderr.write(`agent-harness: ${signal}: killing the engine now; the audit is still being sealed\n`);
      hurry.abort();
    } else {
      streams.stderr.write(`agent-harness: still sealing the audit\n`);
    }
  };
  // Progress on stderr while the engine runs: a status line on a terminal, a line per interval in logs.
  const progress = startCliProgress(
    streams,
    request.engine,
    chooseProgressMode({
      stderrIsTTY: Boolean((streams.stderr as { isTTY?: boolean }).isTTY),
      stdoutIsTTY: Boolean((streams.stdout as { isTTY?: boolean }).isTTY),
      ci: isCi(),
      translate: request.translateMode,
      io: request.io,
    }),
  );
  const live = liveHandlers(streams, request.translateMode);
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  try {
    const result = await runAttempt({
      ...request,
      signal: controller.signal,
      hurry: hurry.signal,
      ...live,
      onRaspEvent: (event) => {
        progress.observe(event);
        live.onRaspEvent?.(event);
      },
      onReady: (info) => {
        readyPrinted = true;
        progress.setLabel(info.run.handle);
        progress.clear();
        printReady(streams, info, request.passthrough ?? []);
      },
    }).finally(() => progress.stop());
    const status = interrupted ? signalExitStatus(interrupted) : null;
    await printFinished(
      streams,
      result,
      request.translateMode,
      verb,
      readyPrinted,
      status === null ? null : { status, signal: interrupted ?? 'SIGINT' },
    );
    if (status !== null) {
      streams.stderr.write(
        `agent-harness: interrupted by ${interrupted}; attempt ${result.attempt} of run ${result.handle} is sealed as ${result.completion.state}${result.completion.code ? ` (${result.completion.code})` : ''}. Resume it with: agent-harness resume ${result.handle} <message>\n`,
      );
      return { status, result };
    }
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
