/**
 * Error messages gemini-cli 0.61.0 reports (in the stream-json `result.error.message`, the `json` document's
 * `error.message` and stderr) and what they mean. The CLI embeds the Gemini API's error JSON
 * (`[API Error: {"error":{"code":401,"message":"API key not valid…","status":"UNAUTHENTICATED"}}]`) or its
 * message (`[API Error: Resource has been exhausted (e.g. check quota).]`), so both the HTTP code and the
 * Google status are matched. Rows are tried in order: the first match wins.
 */
import type { ErrorPattern } from '../engine.js';

/** The gemini error-pattern table, consulted by the completion judge to categorize a failed turn. */
export const geminiErrorPatterns: readonly ErrorPattern[] = [
  {
    pattern: /api key not valid|invalid api key|"code":\s*40[13]\b|\b40[13]\b|UNAUTHENTICATED|PERMISSION_DENIED/i,
    category: 'auth',
    code: 'ENGINE_AUTH_FAILED',
  },
  {
    pattern: /"code":\s*429\b|\b429\b|RESOURCE_EXHAUSTED|resource has been exhausted|quota|rate[ _-]?limit/i,
    category: 'rate_limit',
    code: 'ENGINE_RATE_LIMITED',
  },
  {
    pattern: /model[^\n]{0,80}not found|"code":\s*404\b|\b404\b|NOT_FOUND/i,
    category: 'model',
    code: 'ENGINE_MODEL_UNAVAILABLE',
  },
  {
    pattern:
      /input token count[^\n]{0,40}exceeds|token count exceeds|context (?:window|length)|maximum number of tokens/i,
    category: 'context_length',
    code: 'ENGINE_CONTEXT_LENGTH_EXCEEDED',
  },
  // A malformed model response: `[API Error: Unexpected token 'm', …  is not valid JSON]` (0.61.0, scripted `malformed` turn).
  {
    pattern: /is not valid JSON|Unexpected token .{0,40} JSON|Unexpected end of JSON/i,
    category: 'protocol',
    code: 'ENGINE_PROTOCOL_ERROR',
  },
  // A stream cut mid-event: `[API Error: terminated]` (undici's abort of the body, scripted `drop` turn).
  {
    pattern:
      /ECONNREFUSED|fetch failed|ENOTFOUND|ECONNRESET|ETIMEDOUT|socket hang up|network error|API Error: terminated/i,
    category: 'network',
    code: 'ENGINE_NETWORK_ERROR',
  },
];
