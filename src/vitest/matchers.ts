/**
 * Agent matchers for `expect` (installed by importing the fixtures, or with {@link installMatchers}).
 * They accept a {@link HarnessRun} or any AttemptResult-like object; failures show the last FCMP events and
 * the audit directory.
 */
import { expect } from 'vitest';
import type { ToolCallRecord } from '../core/attempt-result.js';
import * as graders from '../evals/graders/checks.js';
import { failureCodes, fcmpSequenceMatched } from '../evals/graders/checks.js';
import type { Grader } from '../evals/graders/grader.js';
import {
  agentChanges,
  asOutcome,
  describeTool,
  type AgentOutcomeLike,
  type ToolMatcher,
} from '../evals/graders/outcome.js';
import type { FcmpEvent } from '../protocol/index.js';
import { MAX_AUDIT_FILE_BYTES, readInputBytesSync } from '../runtime/bounded-input.js';

// The checks live in the graders (src/evals/graders/): a matcher passes when its grader gives 1.
export type { AgentOutcomeLike, ToolCallPattern, ToolMatcher } from '../evals/graders/outcome.js';
export { callUsesSkill } from '../evals/graders/outcome.js';

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

/** One line per tool call: kind, name, the command or input, exit code and status. */
export function toolCallLines(calls: readonly ToolCallRecord[]): string[] {
  return calls.map((call) => {
    const what = call.command ?? JSON.stringify(call.input ?? null);
    const result =
      call.status === null ? 'no result' : `${call.status}${call.exitCode === null ? '' : `, exit ${call.exitCode}`}`;
    return `  ${call.kind} ${call.name}: ${what.replace(/\s+/g, ' ').slice(0, 160)} → ${result}`;
  });
}

type Result = { pass: boolean; message: () => string };

/** True when `grader` gives `o` a full score: the matchers' pass/fail is their grader's (the check graders are synchronous). */
function passes(grader: Grader, o: AgentOutcomeLike): boolean {
  const grade = grader.grade(o);
  if (grade instanceof Promise)
    throw new TypeError(`grader ${grader.name} is asynchronous; a matcher needs a synchronous check`);
  return grade.score === 1;
}

/** The matcher implementations (exported for reuse with another `expect`). */
export const agentMatchers = {
  toHaveCompleted(received: unknown): Result {
    const o = asOutcome(received);
    const pass = passes(graders.completed(), o);
    return {
      pass,
      message: () =>
        `expected the agent ${pass ? 'not ' : ''}to have completed, completion was ${o.completion.state} (${o.completion.reason})${transcript(o)}`,
    };
  },
  toHaveFailedWith(received: unknown, code: string): Result {
    const o = asOutcome(received);
    const codes = failureCodes(o);
    const pass = passes(graders.failedWith(code), o);
    return {
      pass,
      message: () =>
        `expected the agent ${pass ? 'not ' : ''}to have failed with ${code}, completion was ${o.completion.state} (${o.completion.reason}), failure codes [${codes.join(', ')}]${transcript(o)}`,
    };
  },
  toHaveCalledTool(received: unknown, tool: ToolMatcher): Result {
    const o = asOutcome(received);
    const pass = passes(graders.calledTool(tool), o);
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
    const pass = passes(graders.offeredSkill(name), o);
    return {
      pass,
      message: () =>
        `expected the engine ${pass ? 'not ' : ''}to have offered skill ${name}; injected: ${o.skillsInjected?.join(', ') || 'none'}; offered: ${o.skillsOffered?.join(', ') || 'none'}${transcript(o)}`,
    };
  },
  toHaveUsedSkill(received: unknown, name: string): Result {
    const o = asOutcome(received);
    const pass = passes(graders.usedSkill(name), o);
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
    const pass = passes(graders.changedExactly(paths), o);
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
    const pass = passes(graders.leftUnchanged(paths), o);
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
    const pass = passes(graders.changedFiles(paths), o);
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
    const pass = passes(graders.finalMessage(expected), o);
    return {
      pass,
      message: () =>
        `expected the final message ${pass ? 'not ' : ''}to ${expected instanceof RegExp ? 'match' : 'equal'} ${String(expected)}, got ${JSON.stringify(actual)}${transcript(o)}`,
    };
  },
  toHaveFcmpSequence(received: unknown, types: readonly string[]): Result {
    const o = asOutcome(received);
    const i = fcmpSequenceMatched(o, types);
    const pass = passes(graders.fcmpSequence(types), o);
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
