/**
 * Error messages GitHub Copilot CLI 1.0.102 prints in its `session.error` event (`data.message`, with `statusCode`
 * for API errors; the parser folds them into `message (status N)`) and what they mean. Against the scripted model it
 * retries a 429, a 500, a malformed and a stalled response five times, then fails the turn with "Failed to get
 * response from the AI model; retried 5 times … Last error: …" (fixtures/streams/copilot/). Rows are tried in order:
 * the first match wins.
 */
import type { ErrorPattern } from '../engine.js';

/** The copilot error-pattern table, consulted by the completion judge to categorize a failed turn. */
export const copilotErrorPatterns: readonly ErrorPattern[] = [
  {
    pattern:
      /\(status 40[13]\)|\b40[13] |unauthori[sz]ed|invalid[ _-]?api[ _-]?key|not authenticated|no authentication/i,
    category: 'auth',
    code: 'ENGINE_AUTH_FAILED',
  },
  {
    pattern: /\(status 429\)|Last error: 429|rate[ _-]?limit|too many requests|quota exceeded/i,
    category: 'rate_limit',
    code: 'ENGINE_RATE_LIMITED',
  },
  {
    pattern: /model[^\n]{0,80}(?:not found|does not exist|not available)|unknown model|\(status 404\)/i,
    category: 'model',
    code: 'ENGINE_MODEL_UNAVAILABLE',
  },
  {
    pattern: /context[ _-]?window|context[ _-]?length|maximum context|too many tokens|prompt is too long/i,
    category: 'context_length',
    code: 'ENGINE_CONTEXT_LENGTH_EXCEEDED',
  },
  // A malformed model response: "Failed to parse chat-completions stream chunk: expected value at line 1 column 19".
  { pattern: /Failed to parse chat-completions|stream chunk/i, category: 'protocol', code: 'ENGINE_PROTOCOL_ERROR' },
  {
    pattern:
      /\(status 5\d\d\)|Last error: 5\d\d|unexpected EOF|error decoding response body|ECONNREFUSED|connection refused|fetch failed|socket hang up|ECONNRESET|ETIMEDOUT/i,
    category: 'network',
    code: 'ENGINE_NETWORK_ERROR',
  },
];
