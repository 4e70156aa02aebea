/**
 * Error messages opencode 1.18.33 prints in its `error` event (`error.name` + `error.data.message`, with
 * `statusCode` for API errors; the parser folds them into `Name: message (status N)`) and what they mean.
 * Names seen upstream: APIError, ProviderAuthError, ProviderModelNotFoundError, ContextOverflowError,
 * MessageOutputLengthError, UnknownError. Rows are tried in order: the first match wins.
 */
import type { ErrorPattern } from '../engine.js';

/** The opencode error-pattern table, consulted by the completion judge to categorize a failed turn. */
export const opencodeErrorPatterns: readonly ErrorPattern[] = [
  {
    pattern: /ProviderAuthError|\(status 40[13]\)|unauthori[sz]ed|invalid[ _-]?api[ _-]?key|incorrect api key/i,
    category: 'auth',
    code: 'ENGINE_AUTH_FAILED',
  },
  {
    pattern: /\(status 429\)|rate[ _-]?limit|too many requests|quota exceeded/i,
    category: 'rate_limit',
    code: 'ENGINE_RATE_LIMITED',
  },
  {
    pattern: /ProviderModelNotFoundError|model[^\n]{0,80}(?:not found|does not exist)|unknown model|\(status 404\)/i,
    category: 'model',
    code: 'ENGINE_MODEL_UNAVAILABLE',
  },
  {
    pattern:
      /ContextOverflowError|MessageOutputLengthError|context[ _-]?window|context[ _-]?length|maximum context|too many tokens/i,
    category: 'context_length',
    code: 'ENGINE_CONTEXT_LENGTH_EXCEEDED',
  },
  // A malformed model response: `UnknownError: JSON parsing failed: Text: …` (1.18.33, scripted `malformed` turn).
  { pattern: /JSON parsing failed|JSON Parse error/i, category: 'protocol', code: 'ENGINE_PROTOCOL_ERROR' },
  {
    pattern: /ECONNREFUSED|connection refused|unable to connect|fetch failed|socket hang up|ECONNRESET|ETIMEDOUT/i,
    category: 'network',
    code: 'ENGINE_NETWORK_ERROR',
  },
];
