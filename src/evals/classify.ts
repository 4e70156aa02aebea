/**
 * The failure taxonomy of a trial (issue 45 item 2), from its audit evidence and the harness's stable codes: the
 * completion's code, the `conversation.failed` category FCMP recorded, and the failure's message. Only `model` and
 * `task` failures count against a pass rate; `infrastructure` is retried, `engine` reported apart.
 */
import type { FailureClass } from './grade.js';

/** What the classifier reads of one attempt (an `AttemptResult` has all of it). */
export interface AttemptEvidence {
  completion: { state: string; reason?: string; code?: string };
  /** FCMP events, of which only `conversation.failed` is read. */
  fcmp?: ReadonlyArray<{ type: string; data?: unknown }>;
  assistantMessages?: readonly string[];
  toolCalls?: readonly unknown[];
  /** A harness error the attempt ended with. */
  error?: { code?: string } | null;
}

/** Codes of the harness and the host: never the skill's fault. */
const INFRASTRUCTURE_CODES = new Set([
  'ENGINE_EXECUTABLE_MISSING',
  'ENGINE_SPAWN_FAILED',
  'ENGINE_CONFIG_INJECTION_FAILED',
  'ENGINE_CANCELED',
  'ENGINE_RATE_LIMITED',
  'ENGINE_NETWORK_ERROR',
  'ENGINE_AUTH_FAILED',
  'ENGINE_SESSION_BUSY',
  'ENGINE_NEEDS_TERMINAL',
  'ISOLATION_UNAVAILABLE',
  'ISOLATION_SETUP_FAILED',
  'AUDIT_WRITE_FAILED',
  'AUDIT_TAMPERED',
  'MODEL_SERVER_FAILED',
  'HARNESS_INTERRUPTED',
  'INTERRUPTED',
  'CASSETTE_UPSTREAM_FAILED',
  'CASSETTE_KEY_MISSING',
  'MCP_SERVER_UNREACHABLE',
  'WORKSPACE_GIT_UNAVAILABLE',
  'INTERNAL_ERROR',
]);

/** Codes of the engine itself: it crashed, broke its protocol, or never finished. */
const ENGINE_CODES = new Set([
  'ENGINE_PROTOCOL_ERROR',
  'ENGINE_CRASHED',
  'ENGINE_TIMEOUT',
  'ACP_PROTOCOL_ERROR',
  'MCP_SERVER_STARTUP_STALLED',
]);

/** Codes of the model's side: it refused, could not answer, or its recording/script had no answer. */
const MODEL_CODES = new Set([
  'ENGINE_MODEL_UNAVAILABLE',
  'ENGINE_CONTEXT_LENGTH_EXCEEDED',
  'MODEL_SCRIPT_EXHAUSTED',
  'CASSETTE_MISS',
  'CASSETTE_UNUSED',
  'CASSETTE_NOT_FOUND',
  'CASSETTE_INVALID',
]);

/** `conversation.failed` categories by class. */
const CATEGORY_CLASS: Readonly<Record<string, FailureClass>> = {
  auth: 'infrastructure',
  rate_limit: 'infrastructure',
  network: 'infrastructure',
  canceled: 'infrastructure',
  engine_crash: 'engine',
  protocol: 'engine',
  timeout: 'engine',
  model: 'model',
  context_length: 'model',
};

/**
 * A vendor's (or the scripted model's) HTTP 5xx in a failure message: the server's fault, not the skill's. codex
 * 0.169.0 reports a 500 without its status, as "We’re currently experiencing high demand, which may cause temporary
 * errors." (observed against the scripted model's `turns.error(500, …)`, tests/engine/evals-trials.engine.test.ts).
 */
const SERVER_ERROR =
  /\b5\d\d\b|internal server error|service unavailable|bad gateway|overloaded|experiencing high demand|temporary errors/i;

/** The class of a stable error code, or null when the code says nothing about the class. */
export function classOfCode(code: string | undefined): FailureClass | null {
  if (!code) return null;
  if (INFRASTRUCTURE_CODES.has(code)) return 'infrastructure';
  if (ENGINE_CODES.has(code)) return 'engine';
  if (MODEL_CODES.has(code)) return 'model';
  return null;
}

function failedEvent(evidence: AttemptEvidence): { category?: string; code?: string; message?: string } | null {
  const failed = [...(evidence.fcmp ?? [])].reverse().find((e) => e.type === 'conversation.failed');
  return failed?.data && typeof failed.data === 'object' ? (failed.data as Record<string, string>) : null;
}

/**
 * Classifies a trial whose checks failed. An attempt that failed is classified by its code, else its failure
 * category, else its message (a 5xx is infrastructure); an attempt that ended normally but said nothing and did
 * nothing is the model's (no answer); otherwise the checks failed on what the agent did: `task`.
 */
export function classifyFailure(evidence: AttemptEvidence): { failureClass: FailureClass; code?: string } {
  const failed = failedEvent(evidence);
  const code = evidence.error?.code ?? evidence.completion.code ?? failed?.code;
  const byCode = classOfCode(code);
  if (byCode) return { failureClass: byCode, ...(code ? { code } : {}) };
  if (evidence.completion.state === 'failed' || evidence.completion.state === 'interrupted' || failed) {
    const message = `${failed?.message ?? ''} ${evidence.completion.reason ?? ''}`;
    if (SERVER_ERROR.test(message)) return { failureClass: 'infrastructure', ...(code ? { code } : {}) };
    const byCategory = failed?.category ? CATEGORY_CLASS[failed.category] : undefined;
    return { failureClass: byCategory ?? 'engine', ...(code ? { code } : {}) };
  }
  const said = (evidence.assistantMessages ?? []).some((m) => m.trim() !== '');
  if (!said && (evidence.toolCalls ?? []).length === 0) return { failureClass: 'model' };
  return { failureClass: 'task' };
}

/** True for the classes that count against a pass rate (`model`, `task`). */
export function countsAgainstPassRate(failureClass: FailureClass): boolean {
  return failureClass === 'model' || failureClass === 'task';
}
