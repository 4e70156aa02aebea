/**
 * SIGINT/SIGTERM for commands that hold no engine process (`translate`): the command's work is aborted and
 * the command ends with INTERRUPTED, exit status 128 + signal number (130, 143), and no stack. Work that does
 * not notice the abort in time (a read stuck in the OS) does not keep the process alive: it exits anyway.
 */
import { constants as osConstants } from 'node:os';
import { AgentHarnessError } from '../errors/index.js';

const SIGNAL_STATUS = { SIGINT: 130, SIGTERM: 143 } as const;
type HandledSignal = keyof typeof SIGNAL_STATUS;

/** The shell's status for a command ended by `signal`: 128 + its number (130 for SIGINT, 143 for SIGTERM). */
export function signalExitStatus(signal: NodeJS.Signals): number {
  return signal in SIGNAL_STATUS ? SIGNAL_STATUS[signal as HandledSignal] : 128 + (osConstants.signals[signal] ?? 0);
}

/** How long after the signal the process may take to end on its own before it is ended. */
const FORCE_EXIT_MS = 2_000;

/** Exit status of an INTERRUPTED error (130 or 143), or undefined for any other error. */
export function interruptedStatus(error: unknown): number | undefined {
  if (!(error instanceof AgentHarnessError) || error.code !== 'INTERRUPTED') return undefined;
  const status = error.details.exit_status;
  return typeof status === 'number' ? status : undefined;
}

/**
 * Runs `work` with an AbortSignal that a SIGINT/SIGTERM aborts; on a signal the returned promise rejects at
 * once with INTERRUPTED (details: `signal`, `exit_status`), whether or not `work` has stopped yet.
 */
export async function runInterruptible<T>(command: string, work: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const controller = new AbortController();
  let onSignal: ((signal: HandledSignal) => void) | undefined;
  const interrupted = new Promise<never>((_resolve, reject) => {
    onSignal = (signal) => {
      const status = SIGNAL_STATUS[signal];
      const error = new AgentHarnessError('INTERRUPTED', `${command} was stopped by ${signal}.`, {
        details: { signal, exit_status: status },
      });
      controller.abort(error);
      reject(error);
      // Unref'd: fires only if something (a read stuck in the OS) still keeps the process alive.
      setTimeout(() => process.exit(status), FORCE_EXIT_MS).unref();
    };
  });
  const handler = onSignal!;
  process.on('SIGINT', handler);
  process.on('SIGTERM', handler);
  try {
    return await Promise.race([work(controller.signal), interrupted]);
  } finally {
    process.off('SIGINT', handler);
    process.off('SIGTERM', handler);
  }
}
