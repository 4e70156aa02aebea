/**
 * iFlow error messages and what they mean (from recorded stderr of 0.5.x and its OpenAI-compatible backend).
 */
import type { ErrorPattern } from '../engine.js';

/** The iFlow error-pattern table, checked in order. */
export const iflowErrorPatterns: readonly ErrorPattern[] = [
  {
    pattern: /\b401\b|unauthori[sz]ed|invalid api key|api key is invalid/i,
    category: 'auth',
    code: 'ENGINE_AUTH_FAILED',
  },
  { pattern: /\b429\b|rate limit|too many requests|quota/i, category: 'rate_limit', code: 'ENGINE_RATE_LIMITED' },
  { pattern: /model .*not (found|exist)|\b404\b/i, category: 'model', code: 'ENGINE_MODEL_UNAVAILABLE' },
  {
    pattern: /context (length|window)|too many tokens|maximum context/i,
    category: 'context_length',
    code: 'ENGINE_CONTEXT_LENGTH_EXCEEDED',
  },
  {
    pattern: /fetch failed|econnrefused|enotfound|error when talking to iflow api|retrying with backoff/i,
    category: 'network',
    code: 'ENGINE_NETWORK_ERROR',
  },
  { pattern: /generate data error/i, category: 'model', code: 'ENGINE_GENERATION_FAILED' },
];
