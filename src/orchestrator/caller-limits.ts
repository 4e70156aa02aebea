/**
 * The time and size limits of an HTTP caller, from its options, validated when the caller is created (a bad value
 * is CONFIG_INVALID then, not a surprise on the first call).
 */
import { readIntegerSetting } from '../runtime/integer-setting.js';
import type { FetchLimits } from './bounded-fetch.js';

/** Default deadline of one HTTP attempt, headers and body (60 s). */
export const DEFAULT_CALL_TIMEOUT_MS = 60_000;
/** Default longest silence between body chunks (30 s). */
export const DEFAULT_IDLE_TIMEOUT_MS = 30_000;
/**
 * Default cap of one response body (8 MiB). A streamed answer costs ~150-250 bytes of SSE framing per token, so this
 * holds ~40k tokens, more than the default deadline lets an endpoint send; a caller that raises timeoutMs for long
 * answers raises this too. Parsing costs the SDKs several times the bytes read (measured: ~4x for SSE).
 */
export const DEFAULT_MAX_RESPONSE_BYTES = 8 * 1024 * 1024;

/** Timers past 2^31-1 ms fire at once in Node; no time limit may exceed it. */
export const MAX_TIMER_MS = 2_147_483_647;

/** The limits named by `timeoutMs`, `idleTimeoutMs` and `maxResponseBytes`, defaults filled (CONFIG_INVALID on a bad one). */
export function normalizeCallerLimits(options: {
  timeoutMs?: number | undefined;
  idleTimeoutMs?: number | undefined;
  maxResponseBytes?: number | undefined;
}): FetchLimits {
  const deadlineMs = readIntegerSetting({
    name: 'timeoutMs',
    value: options.timeoutMs,
    fallback: DEFAULT_CALL_TIMEOUT_MS,
    min: 1,
    max: MAX_TIMER_MS,
    unit: 'ms',
  });
  const idleTimeoutMs = readIntegerSetting({
    name: 'idleTimeoutMs',
    value: options.idleTimeoutMs,
    fallback: DEFAULT_IDLE_TIMEOUT_MS,
    min: 1,
    max: MAX_TIMER_MS,
    unit: 'ms',
  });
  const maxResponseBytes = readIntegerSetting({
    name: 'maxResponseBytes',
    value: options.maxResponseBytes,
    fallback: DEFAULT_MAX_RESPONSE_BYTES,
    min: 1,
    unit: 'bytes',
  });
  return { deadlineMs, idleTimeoutMs: Math.min(idleTimeoutMs, deadlineMs), maxResponseBytes };
}

/** The max_tokens a call without one sends: `defaultMaxTokens` (a whole number, 1 or more), else 1024. */
export function normalizeDefaultMaxTokens(value: number | undefined): number {
  return readIntegerSetting({ name: 'defaultMaxTokens', value, fallback: 1024, min: 1 });
}
