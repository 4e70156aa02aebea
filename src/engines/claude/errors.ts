/**
 * Error messages claude 2.1.197 prints (the `result` event's `result` text when `is_error`, e.g.
 * `API Error: 401 {"type":"error","error":{"type":"authentication_error",…}}`, and stderr) and what they
 * mean. The Anthropic error `type` is embedded in the message, so it is matched alongside the status.
 * Rows are tried in order: the first match wins, so more specific rows come first.
 */
import type { ErrorPattern } from '../engine.js';

/** The claude error-pattern table, consulted by the completion judge to categorize a failed turn. */
export const claudeErrorPatterns: readonly ErrorPattern[] = [
  // The account cannot pay for the call ("Credit balance is too low", a 400 invalid_request_error from the API).
  {
    pattern: /credit balance is too low|billing_error|insufficient (?:credit|funds)/i,
    category: 'auth',
    code: 'ENGINE_BILLING_FAILED',
  },
  {
    pattern:
      /\b401\b|authentication_error|invalid x-api-key|invalid api key|unauthori[sz]ed|oauth token (?:has expired|has been revoked)|please run \/login/i,
    category: 'auth',
    code: 'ENGINE_AUTH_FAILED',
  },
  {
    pattern: /\b429\b|rate_limit_error|rate[ _-]?limit|too many requests/i,
    category: 'rate_limit',
    code: 'ENGINE_RATE_LIMITED',
  },
  {
    pattern: /not_found_error|model[^\n]{0,80}(?:not found|does not exist|not available)|unknown model/i,
    category: 'model',
    code: 'ENGINE_MODEL_UNAVAILABLE',
  },
  {
    pattern: /prompt is too long|context[ _-]?window|context[ _-]?length|maximum context/i,
    category: 'context_length',
    code: 'ENGINE_CONTEXT_LENGTH_EXCEEDED',
  },
  // 2.1.332 reports a malformed body as `API Error: API returned an empty or malformed response (HTTP 200) — … body is
  // not valid JSON …` (the `malformed-2.1.332` stream); 2.1.197 said the response could not be parsed.
  {
    pattern: /could not be parsed|failed to parse json|empty or malformed response|body is not valid JSON/i,
    category: 'protocol',
    code: 'ENGINE_PROTOCOL_ERROR',
  },
  {
    pattern: /ECONNREFUSED|ECONNRESET|fetch failed|connection refused|unable to connect|socket hang up|ETIMEDOUT/i,
    category: 'network',
    code: 'ENGINE_NETWORK_ERROR',
  },
];
