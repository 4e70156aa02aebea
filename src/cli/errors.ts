/**
 * How the CLI reports errors: `agent-harness: error CODE: message`, then `hint: what to do`, on stderr.
 * Exit status 2 for usage mistakes, 128 + signal number for an INTERRUPTED command, 1 for everything else.
 */
import pc from 'picocolors';
import { toAgentHarnessError, type ErrorCode } from '../errors/index.js';
import { interruptedStatus } from './interrupt.js';

const USAGE_CODES: ReadonlySet<ErrorCode> = new Set(['USAGE_ERROR', 'ENGINE_UNKNOWN', 'CONFIG_INVALID']);

/** Exit status for an error code. */
export function exitStatusFor(code: ErrorCode): number {
  return USAGE_CODES.has(code) ? 2 : 1;
}

/** Prints an error in the CLI's format and returns the exit status to use. */
export function reportCliError(error: unknown, stderr: NodeJS.WritableStream = process.stderr): number {
  const harnessError = toAgentHarnessError(error);
  stderr.write(`${pc.red('agent-harness: error')} ${pc.bold(harnessError.code)}: ${harnessError.message}\n`);
  stderr.write(`  hint: ${harnessError.hint}\n`);
  if (harnessError.code === 'INTERNAL_ERROR' && harnessError.cause instanceof Error && harnessError.cause.stack) {
    stderr.write(`${pc.dim(harnessError.cause.stack)}\n`);
  }
  return interruptedStatus(harnessError) ?? exitStatusFor(harnessError.code);
}
