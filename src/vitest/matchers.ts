/**
 * Agent matchers for `expect` (installed by importing the fixtures, or with {@link installMatchers}).
 * They accept a {@link HarnessRun} or any AttemptResult-like object; failures show the last FCMP events and
 * the audit directory.
 */
import { expect } from 'vitest';
import type { ToolCallRecord } from '../core/attempt-result.js';
import type { Completion, FcmpEvent, FsDiff } from '../protocol/index.js';
import { MAX_AUDIT_FILE_BYTES, readInputBytesSync } from '../runtime/bounded-input.js';
import { stripDoneMarker } from '../translate/completion.js';
import { callUsesSkill } from '../evals/skill-load.js';

/** The fields the matchers read (a HarnessRun or an AttemptResult both fit). */
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

/** What `toHaveCalledTool` accepts: a name/kind, a pattern on name/kind, a predicate, or a {@link ToolCallPattern}. */
export type ToolMatcher = string | RegExp | ((call: ToolCallRecord) => boolean) | ToolCallPattern;

interface AgentMatchers<R = unknown> {
  /** The attempt completed (`conversation.completed`). */
  toHaveCompleted(): R;
  /** The attempt failed with this code (conversation.failed `data.code`, or the completion reason). */
  toHaveFailedWith(code: string): R;
  /** A tool call matched by name or kind, pattern, or predicate. */
  toHaveCalledTool(tool: ToolMatcher): R;
  /** The skill was used: a skill tool call, a read of `<skill>/SKILL.md`, or named in a tool input. */
  toHaveUsedSkill(name: string): R;
  /** The engine offered the skill to the model (named in its first real model request). */
  toHaveOfferedSkill(name: string): R;
  /** Every path was created or modified in the run directory. */
  toHaveChangedFiles(paths: readonly string[]): R;
  /**
   * The agent changed (created, modified or deleted) exactly these paths, no more, no fewer. The engine's own
   * bookkeeping files (`fsDiff.engine_bookkeeping`) are not the agent's changes, so this means the same on every engine.
   */
  toHaveChangedExactly(paths: readonly string[]): R;
  /** None of these paths was created, modified or deleted by the agent. */
  toHaveLeftUnchanged(paths: readonly string[]): R;
  /** The last final assistant message equals the string (trimmed, done marker ignored) or matches the pattern. */
  toHaveFinalMessage(expected: string | RegExp): R;
  /** The FCMP types appear in this order (not necessarily adjacent). */
  toHaveFcmpSequence(types: readonly string[]): R;
}

declare module 'vitest' {
  // biome-ignore lint/suspicious/noExplicitAny: the declaration merges with Vitest's own `Assertion<T = any>`
  interface Assertion<T = any> extends AgentMatchers<void> {}
  // eslint-disable-next-line @typescript-eslint/no-empty-object-type
  interface AsymmetricMatchersContaining extends AgentMatchers {}
}

/** What one FCMP event says, on one line: a tool call's kind, name and command (or input), a result's status. */
function eventText(event: FcmpEvent): string {
  let text: string;
  if (event.type === 'tool.call') {
    const { kind, name, command, input_excerpt } = event.data;
    text = `${kind} ${name}${command !== null ? `: ${command}` : input_excerpt !== null ? `: ${input_excerpt}` : ''}`;
  } else if (event.type === 'tool.result') {
    const { status, exit_code, output_excerpt } = event.data;
    text = `${status}${exit_code === null ? '' : `, exit ${exit_code}`}${output_excerpt ? `: ${output_excerpt}` : ''}`;
  } else {
    const data = event.data as Record<string, unknown>;
    const code = typeof data.code === 'string' ? `[${data.code}] ` : '';
    text = `${code}${String(data.text ?? data.message ?? data.reason ?? data.launch ?? '')}`;
  }
  return text.replace(/\s+/g, ' ').slice(0, 160);
}

/**
 * The failure, whole (its first paragraph, up to 2000 characters): the transcript's lines are cut at 160, which would
 * lose what a long message says last (a cassette's path comes before "Re-record it: … -u").
 */
function failureText(events: readonly FcmpEvent[]): string {
  const failed = events.findLast((event) => event.type === 'conversation.failed');
  if (failed?.type !== 'conversation.failed') return '';
  const { code, category, message } = failed.data;
  return `\nFailure: ${code} (category ${category}): ${(message.split('\n\n')[0] ?? '').slice(0, 2000)}`;
}

/** A short transcript: the failure, the last FCMP events as `type: text` lines, then the audit directory. */
export function transcript(outcome: AgentOutcomeLike, last = 12): string {
  const events = outcome.fcmp ?? [];
  const lines = events.slice(-last).map((e) => `  ${e.type}: ${eventText(e)}`);
  const audit = outcome.auditDir ?? outcome.audit?.dir ?? '(unknown)';
  const tools = toolCallLines(outcome.toolCalls ?? []);
  return `${failureText(events)}\nTranscript (last ${lines.length} of ${events.length} FCMP events):\n${lines.join('\n') || '  (none)'}\nTool calls (${tools.length}):\n${tools.join('\n') || '  (none)'}\nAudit: ${audit}`;
}

/** The skills injected into the run: the outcome's own list, else its audit meta's (read only to explain a failure). */
/** The skills the engine offered to the model, as a failure message lists them (null: no model request recorded). */
function offeredSkills(outcome: AgentOutcomeLike): string {
  if (outcome.skillsOffered === null || outcome.skillsOffered === undefined)
    return '(unknown: no model request was recorded)';
  return outcome.skillsOffered.join(', ') || 'none';
}

function injectedSkills(outcome: AgentOutcomeLike): string {
  if (outcome.skillsInjected) return outcome.skillsInjected.join(', ') || 'none';
  try {
    const file = outcome.audit?.meta ?? '';
    const meta = JSON.parse(
      readInputBytesSync(file, { what: 'attempt meta', maxBytes: MAX_AUDIT_FILE_BYTES, noFollow: true }).toString(
        'utf8',
      ),
    ) as {
      skill_injection?: { skills?: Array<{ name: string }> };
    };
    const names = meta.skill_injection?.skills?.map((s) => s.name) ?? [];
    return names.length > 0 ? names.join(', ') : 'none';
  } catch {
    return '(unknown: no audit meta)';
  }
}

/** Every path the agent created, modified or deleted (engine bookkeeping excluded by the diff itself). */
function agentChanges(o: AgentOutcomeLike): Set<string> {
  return new Set([...(o.fsDiff?.created ?? []), ...(o.fsDiff?.modified ?? []), ...(o.fsDiff?.deleted ?? [])]);
}

function asOutcome(received: unknown): AgentOutcomeLike {
  if (!received || typeof received !== 'object' || !('completion' in received) || !('fcmp' in received)) {
    throw new TypeError('agent-harness matchers expect a HarnessRun or an AttemptResult (with completion and fcmp)');
  }
  return received as AgentOutcomeLike;
}

const fieldMatches = (value: string | null, expected: string | RegExp | undefined): boolean =>
  expected === undefined ||
  (value !== null && (typeof expected === 'string' ? value === expected : expected.test(value)));

function toolMatches(call: ToolCallRecord, tool: ToolMatcher): boolean {
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

function describeTool(tool: ToolMatcher): string {
  if (typeof tool === 'function') return 'matching the predicate';
  if (typeof tool === 'string' || tool instanceof RegExp) return String(tool);
  return JSON.stringify(tool, (_key, value: unknown) => (value instanceof RegExp ? String(value) : value));
}

/** One line per tool call: kind, name, the command or input, exit code and status. */
export function toolCallLines(calls: readonly ToolCallRecord[]): string[] {
  return calls.map((call) => {
    const what = call.command ?? JSON.stringify(call.input ?? null);
    const result =
      call.status === null ? 'no result' : `${call.status}${call.exitCode === null ? '' : `, exit ${call.exitCode}`}`;
    return `  ${call.kind} ${call.name}: ${what.replace(/\s+/g, ' ').slice(0, 160)} → ${result}`;
  });
}

export { callUsesSkill };

type Result = { pass: boolean; message: () => string };

/** The matcher implementations (exported for reuse with another `expect`). */
export const agentMatchers = {
  toHaveCompleted(received: unknown): Result {
    const o = asOutcome(received);
    const pass = o.completion.state === 'completed';
    return {
      pass,
      message: () =>
        `expected the agent ${pass ? 'not ' : ''}to have completed, completion was ${o.completion.state} (${o.completion.reason})${transcript(o)}`,
    };
  },
  toHaveFailedWith(received: unknown, code: string): Result {
    const o = asOutcome(received);
    const codes = o.fcmp.filter((e) => e.type === 'conversation.failed').map((e) => (e.data as { code: string }).code);
    const pass = o.completion.state === 'failed' && (codes.includes(code) || o.completion.reason === code);
    return {
      pass,
      message: () =>
        `expected the agent ${pass ? 'not ' : ''}to have failed with ${code}, completion was ${o.completion.state} (${o.completion.reason}), failure codes [${codes.join(', ')}]${transcript(o)}`,
    };
  },
  toHaveCalledTool(received: unknown, tool: ToolMatcher): Result {
    const o = asOutcome(received);
    const calls = o.toolCalls ?? [];
    const pass = calls.some((call) => toolMatches(call, tool));
    return {
      pass,
      message: () =>
        `expected the agent ${pass ? 'not ' : ''}to have called tool ${describeTool(tool)}${transcript(o)}`,
    };
  },
  toHaveOfferedSkill(received: unknown, name: string): Result {
    const o = asOutcome(received);
    if (o.skillsOffered === null || o.skillsOffered === undefined) {
      return {
        pass: false,
        message: () =>
          `cannot tell whether skill ${name} was offered: no model request was recorded (live mode?)${transcript(o)}`,
      };
    }
    const pass = o.skillsOffered.includes(name);
    return {
      pass,
      message: () =>
        `expected the engine ${pass ? 'not ' : ''}to have offered skill ${name}; injected: ${o.skillsInjected?.join(', ') || 'none'}; offered: ${o.skillsOffered?.join(', ') || 'none'}${transcript(o)}`,
    };
  },
  toHaveUsedSkill(received: unknown, name: string): Result {
    const o = asOutcome(received);
    const pass = (o.toolCalls ?? []).some((call) => callUsesSkill(call, name));
    return {
      pass,
      message: () =>
        `expected the agent ${pass ? 'not ' : ''}to have used skill ${name}; skills injected: ${injectedSkills(o)}; offered: ${offeredSkills(o)}${transcript(o)}`,
    };
  },
  toHaveChangedExactly(received: unknown, paths: readonly string[]): Result {
    const o = asOutcome(received);
    const changed = agentChanges(o);
    const wanted = new Set(paths.map((p) => p.replace(/^\.\//, '')));
    const missing = [...wanted].filter((p) => !changed.has(p));
    const extra = [...changed].filter((p) => !wanted.has(p));
    const pass = missing.length === 0 && extra.length === 0;
    const detail = `missing: ${missing.join(', ') || 'none'}; unexpected: ${extra.join(', ') || 'none'}; engine bookkeeping (ignored): ${o.fsDiff?.engine_bookkeeping?.join(', ') || 'none'}`;
    return {
      pass,
      message: () =>
        `expected the agent ${pass ? 'not ' : ''}to have changed exactly ${[...wanted].join(', ') || 'nothing'}; ${detail}${transcript(o)}`,
    };
  },
  toHaveLeftUnchanged(received: unknown, paths: readonly string[]): Result {
    const o = asOutcome(received);
    const changed = agentChanges(o);
    const touched = paths.map((p) => p.replace(/^\.\//, '')).filter((p) => changed.has(p));
    const pass = touched.length === 0;
    return {
      pass,
      message: () =>
        pass
          ? `expected the agent to have changed one of ${paths.join(', ')}${transcript(o)}`
          : `expected the agent to have left ${touched.join(', ')} unchanged${transcript(o)}`,
    };
  },
  toHaveChangedFiles(received: unknown, paths: readonly string[]): Result {
    const o = asOutcome(received);
    const changed = new Set([...(o.fsDiff?.created ?? []), ...(o.fsDiff?.modified ?? [])]);
    const missing = paths.filter((p) => !changed.has(p.replace(/^\.\//, '')));
    const pass = missing.length === 0;
    return {
      pass,
      message: () =>
        pass
          ? `expected the agent not to have changed ${paths.join(', ')}${transcript(o)}`
          : `expected the agent to have changed ${missing.join(', ')}; changed: ${[...changed].join(', ') || 'nothing'}${transcript(o)}`,
    };
  },
  toHaveFinalMessage(received: unknown, expected: string | RegExp): Result {
    const o = asOutcome(received);
    const actual = o.finalMessage ?? null;
    const pass =
      actual !== null &&
      (expected instanceof RegExp ? expected.test(actual) : stripDoneMarker(actual) === expected.trim());
    return {
      pass,
      message: () =>
        `expected the final message ${pass ? 'not ' : ''}to ${expected instanceof RegExp ? 'match' : 'equal'} ${String(expected)}, got ${JSON.stringify(actual)}${transcript(o)}`,
    };
  },
  toHaveFcmpSequence(received: unknown, types: readonly string[]): Result {
    const o = asOutcome(received);
    let i = 0;
    for (const event of o.fcmp) if (i < types.length && event.type === types[i]) i += 1;
    const pass = i === types.length;
    return {
      pass,
      message: () =>
        `expected FCMP events ${pass ? 'not ' : ''}to contain the sequence [${types.join(', ')}]${pass ? '' : `; matched up to ${types[i]}`}${transcript(o)}`,
    };
  },
};

let installed = false;

/** Installs the agent matchers on Vitest's `expect` (idempotent). */
export function installMatchers(): void {
  if (installed) return;
  installed = true;
  expect.extend(agentMatchers);
}
