/**
 * Error messages Qwen Code 0.24.4 reports (the `result` event's `error.message` and the assistant text before it,
 * `[API Error: 401 bad key]`, and stderr) and what they mean. The OpenAI client's message leads with the HTTP status,
 * so the status is matched alongside the usual words. Rows are tried in order: the first match wins.
 */
import type { ErrorPattern } from '../engine.js';

/** The qwen error-pattern table, consulted by the completion judge to categorize a failed turn. */
export const qwenErrorPatterns: readonly ErrorPattern[] = [
  {
    pattern: /API Error: 40[13]\b|invalid api key|incorrect api key|unauthori[sz]ed|authentication/i,
    category: 'auth',
    code: 'ENGINE_AUTH_FAILED',
  },
  {
    pattern: /API Error: 429\b|\b429\b|rate[ _-]?limit|too many requests|quota/i,
    category: 'rate_limit',
    code: 'ENGINE_RATE_LIMITED',
  },
  {
    pattern: /model[^\n]{0,80}(?:not found|does not exist)|API Error: 404\b/i,
    category: 'model',
    code: 'ENGINE_MODEL_UNAVAILABLE',
  },
  {
    pattern: /context (?:window|length)|maximum context|too many tokens|token limit/i,
    category: 'context_length',
    code: 'ENGINE_CONTEXT_LENGTH_EXCEEDED',
  },
  // A malformed model response: `[API Error: Unexpected token 'm', … is not valid JSON]` (0.24.4, scripted `malformed`).
  {
    pattern:
      /is not valid JSON|Unexpected token .{0,40} JSON|Unexpected end of JSON|Could not parse message into JSON/i,
    category: 'protocol',
    code: 'ENGINE_PROTOCOL_ERROR',
  },
  {
    pattern:
      /ECONNREFUSED|fetch failed|ENOTFOUND|ECONNRESET|ETIMEDOUT|socket hang up|network error|terminated|Connection error|premature close/i,
    category: 'network',
    code: 'ENGINE_NETWORK_ERROR',
  },
];
