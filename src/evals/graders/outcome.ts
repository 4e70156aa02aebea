/**
 * What graders read of a trial: an attempt's result (a `HarnessRun` or an `AttemptResult` both fit), and the checks
 * the Vitest matchers and the graders share. Over attempt results and FCMP only: no Vitest here.
 */
import type { ToolCallRecord } from '../../core/attempt-result.js';
import type { Completion, FcmpEvent, FsDiff } from '../../protocol/index.js';

/** The fields graders and matchers read (a HarnessRun or an AttemptResult both fit). */
export interface AgentOutcomeLike {
  completion: Completion;
  fcmp: readonly FcmpEvent[];
  toolCalls?: readonly ToolCallRecord[];
  fsDiff?: FsDiff | null;
  finalMessage?: string | null;
  audit?: { dir: string; meta?: string };
  skillsInjected?: readonly string[];
  skillsOffered?: readonly string[] | null;
  auditDir?: string;
  /** The run directory (the agent's working directory), where file graders read what the agent wrote. */
  runDir?: string;
}

/**
 * Fields of a tool call to match; every given field must match. `command` is the normalized shell command (the
 * engine's wrapper removed) and `exitCode` the normalized exit code, so one pattern means the same on every engine.
 */
export interface ToolCallPattern {
  name?: string | RegExp;
  kind?: string;
  command?: string | RegExp;
  exitCode?: number;
  status?: string;
}

/** A tool to look for: a name/kind, a pattern on name/kind, a predicate, or a {@link ToolCallPattern}. */
export type ToolMatcher = string | RegExp | ((call: ToolCallRecord) => boolean) | ToolCallPattern;

/** Every path the agent created, modified or deleted (engine bookkeeping excluded by the diff itself). */
export function agentChanges(o: AgentOutcomeLike): Set<string> {
  return new Set([...(o.fsDiff?.created ?? []), ...(o.fsDiff?.modified ?? []), ...(o.fsDiff?.deleted ?? [])]);
}

/** A user's relative path as the fs diff lists it (`./a.txt` is `a.txt`). */
export function diffPath(p: string): string {
  return p.replace(/^\.\//, '');
}

const fieldMatches = (value: string | null, expected: string | RegExp | undefined): boolean =>
  expected === undefined ||
  (value !== null && (typeof expected === 'string' ? value === expected : expected.test(value)));

/** True when `call` matches `tool`. */
export function toolMatches(call: ToolCallRecord, tool: ToolMatcher): boolean {
  if (typeof tool === 'function') return tool(call);
  if (tool instanceof RegExp) return tool.test(call.name) || tool.test(call.kind);
  if (typeof tool === 'string') return call.name === tool || call.kind === tool;
  return (
    fieldMatches(call.name, tool.name) &&
    fieldMatches(call.kind, tool.kind) &&
    fieldMatches(call.command, tool.command) &&
    fieldMatches(call.status, tool.status) &&
    (tool.exitCode === undefined || call.exitCode === tool.exitCode)
  );
}

/** `tool` in words, for reasons and messages. */
export function describeTool(tool: ToolMatcher): string {
  if (typeof tool === 'function') return 'matching the predicate';
  if (typeof tool === 'string' || tool instanceof RegExp) return String(tool);
  return JSON.stringify(tool, (_key, value: unknown) => (value instanceof RegExp ? String(value) : value));
}

// Load evidence has one home, shared with the trigger evals.
export { callUsesSkill } from '../skill-load.js';

/** Throws a TypeError unless `received` looks like an attempt result. */
export function asOutcome(received: unknown): AgentOutcomeLike {
  if (!received || typeof received !== 'object' || !('completion' in received) || !('fcmp' in received)) {
    throw new TypeError('agent-harness matchers expect a HarnessRun or an AttemptResult (with completion and fcmp)');
  }
  return received as AgentOutcomeLike;
}
