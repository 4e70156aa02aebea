/**
 * The retry policy shared by the HTTP callers: bounded retries on 429/5xx and connection failures, honouring
 * `retry-after` (seconds or an HTTP date, capped), exponential backoff otherwise, every wait abortable.
 * Vendor SDK errors are turned into AgentHarnessError codes carrying the status and the vendor's error body.
 */
import { AgentHarnessError, isAgentHarnessError } from '../errors/index.js';
import { readIntegerSetting } from '../runtime/integer-setting.js';
import { MAX_TIMER_MS } from './caller-limits.js';
import type { VendorErrorClasses } from './vendor-error-classes.js';

// Matched by class, not by `name`: the openai client's errors do not set a distinctive `name`. The classes come
// from the caller's SDK, loaded on demand (the SDKs are optional peers, see vendor-sdk.ts).
const isA = (error: unknown, errorClass: (abstract new (...args: never[]) => unknown) | undefined): boolean =>
  errorClass !== undefined && error instanceof errorClass;

/** Retry settings of an HTTP caller. */
export interface RetryPolicy {
  /** Retries after the first attempt (default 2). */
  maxRetries: number;
  /** First backoff when no retry-after is given (default 250 ms), doubled each retry. */
  baseDelayMs: number;
  /** Upper bound of any wait, retry-after included (default 30 s). */
  maxDelayMs: number;
  /** Waits `ms` or rejects when `signal` aborts; injectable so tests observe waits without sleeping. */
  sleep: (ms: number, signal?: AbortSignal) => Promise<void>;
}

/** Shape shared by the openai and @anthropic-ai/sdk APIError classes. */
interface VendorApiError {
  status?: number;
  headers?: Headers;
  error?: unknown;
  name: string;
  message: string;
}

/** Default abortable wait. */
export function sleepFor(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    function onAbort(): void {
      clearTimeout(timer);
      reject(signal?.reason);
    }
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/** Fills defaults and validates a partial policy (CONFIG_INVALID on a bad value). */
export function normalizeRetryPolicy(partial: Partial<RetryPolicy> = {}): RetryPolicy {
  const read = (key: 'maxRetries' | 'baseDelayMs' | 'maxDelayMs', fallback: number, max?: number): number =>
    readIntegerSetting({
      name: `retry ${key}`,
      value: partial[key],
      fallback,
      ...(max !== undefined ? { max } : {}),
      ...(key === 'maxRetries' ? {} : { unit: 'ms' }),
    });
  return {
    maxRetries: read('maxRetries', 2, 10),
    baseDelayMs: read('baseDelayMs', 250, MAX_TIMER_MS),
    maxDelayMs: read('maxDelayMs', 30_000, MAX_TIMER_MS),
    sleep: partial.sleep ?? sleepFor,
  };
}

/** Milliseconds a `retry-after` header asks for, or null when absent or unreadable. */
export function parseRetryAfter(value: string | null | undefined, now = Date.now()): number | null {
  if (!value) return null;
  const seconds = Number(value);
  if (Number.isFinite(seconds) && seconds >= 0) return Math.round(seconds * 1000);
  const date = Date.parse(value);
  return Number.isNaN(date) ? null : Math.max(0, date - now);
}

/**
 * Maps an SDK error to an AgentHarnessError; `retryable` says whether another attempt may help. `classes` are the
 * SDK's abort, timeout and connection error classes (without them only HTTP statuses and aborts are told apart).
 */
export function classifyCallError(
  error: unknown,
  vendor: string,
  model: string,
  signal?: AbortSignal,
  classes?: VendorErrorClasses,
): { error: AgentHarnessError; retryable: boolean; retryAfterMs: number | null } {
  const details = { vendor, model };
  // A limit of the bounded fetch (LLM_TIMEOUT, LLM_RESPONSE_TOO_LARGE) reaches us as the error itself or as the
  // cause of the SDK's connection error; it is final either way.
  const own = findHarnessError(error);
  if (own) {
    Object.assign(own.details, details);
    return { error: own, retryable: false, retryAfterMs: null };
  }
  const e = error as VendorApiError;
  if (signal?.aborted || isA(error, classes?.abort) || e.name === 'AbortError') {
    return {
      error: new AgentHarnessError('LLM_ABORTED', `${vendor} call to model ${model} was aborted.`, {
        cause: error,
        details,
      }),
      retryable: false,
      retryAfterMs: null,
    };
  }
  if (isA(error, classes?.timeout)) {
    return {
      error: new AgentHarnessError('LLM_TIMEOUT', `${vendor} call to model ${model} timed out.`, {
        cause: error,
        details,
      }),
      retryable: false,
      retryAfterMs: null,
    };
  }
  if (typeof e.status === 'number') {
    const status = e.status;
    const retryable = status === 429 || status >= 500;
    const retryAfterMs = parseRetryAfter(e.headers?.get?.('retry-after'));
    const message = `${vendor} call to model ${model} failed with HTTP ${status}: ${e.message}`;
    return {
      error: new AgentHarnessError('LLM_HTTP_ERROR', message, {
        cause: error,
        details: { ...details, status, body: e.error ?? null },
      }),
      retryable,
      retryAfterMs,
    };
  }
  if (isA(error, classes?.connection)) {
    return {
      error: new AgentHarnessError(
        'LLM_CONNECTION_FAILED',
        `${vendor} endpoint for model ${model} could not be reached: ${e.message}`,
        { cause: error, details },
      ),
      retryable: true,
      retryAfterMs: null,
    };
  }
  return {
    error: new AgentHarnessError('LLM_RESPONSE_INVALID', `${vendor} call to model ${model} failed: ${e.message}`, {
      cause: error,
      details,
    }),
    retryable: false,
    retryAfterMs: null,
  };
}

/** The first AgentHarnessError in `error`'s cause chain (bounded: a cycle or a deep chain stops the walk). */
function findHarnessError(error: unknown): AgentHarnessError | null {
  let current = error;
  for (let depth = 0; depth < 8 && current; depth += 1) {
    if (isAgentHarnessError(current)) return current;
    current = (current as { cause?: unknown }).cause;
  }
  return null;
}

/** Runs `attempt` until it succeeds, fails for good or the retries run out; returns the value and attempt count. */
export async function callWithRetries<T>(
  attempt: () => Promise<T>,
  context: {
    vendor: string;
    model: string;
    policy: RetryPolicy;
    signal?: AbortSignal;
    errorClasses?: VendorErrorClasses;
  },
): Promise<{ value: T; attempts: number }> {
  const { policy, signal } = context;
  for (let n = 0; ; n += 1) {
    try {
      return { value: await attempt(), attempts: n + 1 };
    } catch (raw) {
      const { error, retryable, retryAfterMs } = classifyCallError(
        raw,
        context.vendor,
        context.model,
        signal,
        context.errorClasses,
      );
      error.details.attempts = n + 1;
      if (!retryable || n >= policy.maxRetries) throw error;
      const wait = Math.min(policy.maxDelayMs, retryAfterMs ?? policy.baseDelayMs * 2 ** n);
      try {
        await policy.sleep(wait, signal);
      } catch (cause) {
        throw new AgentHarnessError(
          'LLM_ABORTED',
          `${context.vendor} call to model ${context.model} was aborted while waiting to retry.`,
          { cause, details: { vendor: context.vendor, model: context.model, attempts: n + 1 } },
        );
      }
    }
  }
}
