/**
 * Error messages codex 0.169.0 prints (in `turn.failed.error.message`, top-level `error` events, `error` items
 * and stderr) and what they mean. Sources: shared/research/codex-claude.md §4 and the upstream client
 * (`codex-rs/core`), whose messages embed the HTTP status (`unexpected status 401 Unauthorized`,
 * `exceeded retry limit, last status: 429 Too Many Requests`, `stream disconnected before completion`).
 * Rows are tried in order: the first match wins, so more specific rows come first.
 */
import type { ErrorPattern } from '../engine.js';

/** The codex error-pattern table, consulted by the completion judge to categorize a failed turn. */
export const codexErrorPatterns: readonly ErrorPattern[] = [
  // `resume` of a session another codex process is writing (two resumes of one run at once): codex exits at once,
  // `Error: thread/resume: thread/resume failed: thread <id> already has an active writer (code -32600)`.
  {
    pattern: /thread [0-9a-f-]+ already has an active writer/i,
    category: 'engine_crash',
    code: 'ENGINE_SESSION_BUSY',
    onExit: true,
  },
  {
    pattern: /\b401\b|unauthori[sz]ed|invalid[ _-]?api[ _-]?key|incorrect api key|missing bearer/i,
    category: 'auth',
    code: 'ENGINE_AUTH_FAILED',
  },
  {
    pattern: /\b429\b|rate[ _-]?limit|too many requests|quota exceeded/i,
    category: 'rate_limit',
    code: 'ENGINE_RATE_LIMITED',
  },
  {
    pattern: /model metadata|model[^\n]{0,80}(?:not found|does not exist)|unknown model|unsupported model/i,
    category: 'model',
    code: 'ENGINE_MODEL_UNAVAILABLE',
  },
  {
    pattern: /context[ _-]?window|context[ _-]?length|maximum context|too many tokens/i,
    category: 'context_length',
    code: 'ENGINE_CONTEXT_LENGTH_EXCEEDED',
  },
  // Checked before `network`: a stream closed early is a wire-protocol break, not an unreachable host.
  { pattern: /stream closed before response\.completed/i, category: 'protocol', code: 'ENGINE_PROTOCOL_ERROR' },
  {
    pattern:
      /stream disconnected|connection refused|error sending request|connection reset|timed out connecting|dns error/i,
    category: 'network',
    code: 'ENGINE_NETWORK_ERROR',
  },
];
