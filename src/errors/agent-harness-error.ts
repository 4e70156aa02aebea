import { ERROR_CODES, type ErrorCode } from './codes.js';

/** Options of an {@link AgentHarnessError}. */
export interface AgentHarnessErrorOptions {
  /** The original error, kept for debugging. */
  cause?: unknown;
  /** Attempt number the error belongs to, when there is one. */
  attempt?: number;
  /** What to do about it; defaults to the code's hint. */
  hint?: string;
  /** Structured details (paths searched, values rejected…), serializable. */
  details?: Record<string, unknown>;
}

/**
 * The one error class of agent-harness. `code` is stable and is what callers, retries and reports select on;
 * `message` says what was wrong and with which value; `hint` says what to do.
 */
export class AgentHarnessError extends Error {
  override readonly name = 'AgentHarnessError';
  /** Stable code. */
  readonly code: ErrorCode;
  /** What the user should do. */
  readonly hint: string;
  /** Attempt number, when known. */
  readonly attempt: number | undefined;
  /** Structured details. */
  readonly details: Record<string, unknown>;

  constructor(code: ErrorCode, message: string, options: AgentHarnessErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.hint = options.hint ?? ERROR_CODES[code];
    this.attempt = options.attempt;
    this.details = options.details ?? {};
  }

  /** A plain object for JSON output and audit files. */
  toJSON(): { code: ErrorCode; message: string; hint: string; details: Record<string, unknown> } {
    return { code: this.code, message: this.message, hint: this.hint, details: this.details };
  }
}

/** True when `error` is an {@link AgentHarnessError}, optionally with the given code. */
export function isAgentHarnessError(error: unknown, code?: ErrorCode): error is AgentHarnessError {
  return error instanceof AgentHarnessError && (code === undefined || error.code === code);
}

/** Wraps anything thrown into an {@link AgentHarnessError} (INTERNAL_ERROR unless it already is one). */
export function toAgentHarnessError(error: unknown): AgentHarnessError {
  if (error instanceof AgentHarnessError) return error;
  const message = error instanceof Error ? error.message : String(error);
  const errno = (error as NodeJS.ErrnoException | null)?.code;
  if (errno && STORAGE_ERRNOS.has(errno)) {
    const file = (error as NodeJS.ErrnoException).path ?? null;
    return new AgentHarnessError('AUDIT_WRITE_FAILED', `Could not write ${file ?? 'a file'}: ${message}`, {
      cause: error,
      details: { errno, file },
    });
  }
  return new AgentHarnessError('INTERNAL_ERROR', message, { cause: error });
}

/** Errors of the storage itself (full, over quota, read-only, failing): not a bug of the harness. */
const STORAGE_ERRNOS = new Set(['ENOSPC', 'EDQUOT', 'EROFS', 'EIO', 'EFBIG']);
