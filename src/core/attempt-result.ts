/**
 * The typed result of one attempt, derived from its RASP and FCMP events: what a test asserts on and what
 * the CLI summarizes.
 */
import type { AgentHarnessError } from '../errors/index.js';
import type { Completion, EngineId, FcmpEvent, FsDiff, RaspEvent, Usage } from '../protocol/index.js';
import type { AttemptAuditPaths } from './audit-files.js';
import { collectToolCalls, type NormalizedToolCall } from '../translate/tool-calls.js';

/** A tool call the engine made, with its result when seen (normalized across engines, see `tool-calls.ts`). */
export type ToolCallRecord = NormalizedToolCall;

/** The outcome of one attempt. */
export interface AttemptResult {
  runId: string;
  handle: string;
  runDir: string;
  engine: EngineId;
  attempt: number;
  launch: 'start' | 'resume';
  sessionId: string | null;
  exitCode: number | null;
  signal: string | null;
  timedOut: boolean;
  completion: Completion;
  rasp: RaspEvent[];
  fcmp: FcmpEvent[];
  assistantMessages: string[];
  finalMessage: string | null;
  toolCalls: ToolCallRecord[];
  fsDiff: FsDiff | null;
  usage: Usage | null;
  durationMs: number;
  /** Version of the engine CLI (from its npm package), null when unknown. */
  engineVersion: string | null;
  /** Names of the skills injected into the run dir. */
  skillsInjected: string[];
  /** Injected skills the engine offered the model in its first real request; null when unknown (live mode). */
  skillsOffered: string[] | null;
  audit: AttemptAuditPaths;
  /** Set when the harness itself failed (before or around the engine); the audit files exist anyway. */
  error: AgentHarnessError | null;
}

/** Tool calls in order, each joined with its result and normalized. */
export { collectToolCalls };

/** Texts of the final assistant messages, in order. */
export function collectAssistantMessages(fcmp: readonly FcmpEvent[]): string[] {
  return fcmp.filter((event) => event.type === 'assistant.message.final').map((event) => (event.data as { text: string }).text);
}

/** The last usage the engine reported, or null. */
export function lastUsage(rasp: readonly RaspEvent[]): Usage | null {
  let usage: Usage | null = null;
  for (const { data } of rasp) if (data.type === 'engine.usage') usage = data.usage;
  return usage;
}

/** The last session id seen, or `fallback`. */
export function lastSessionId(rasp: readonly RaspEvent[], fallback: string | null): string | null {
  let session = fallback;
  for (const { data } of rasp) if (data.type === 'engine.session') session = data.session_id;
  return session;
}
