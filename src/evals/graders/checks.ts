/**
 * The matchers' checks as graders (issue 45): each gives a score in [0, 1] with a reason. A check over several items
 * (files, an FCMP sequence) gives partial credit, the share of items that hold; the Vitest matchers pass only on 1.
 */
import fs from 'node:fs';
import path from 'node:path';
import { isWithin } from '../../runtime/path-within.js';
import { stripDoneMarker } from '../../translate/completion.js';
import { SKILL_NOT_LOADED } from '../../model/follow-skill.js';
import { binaryGrade, type Grader } from './grader.js';
import {
  agentChanges,
  callUsesSkill,
  describeTool,
  diffPath,
  toolMatches,
  type AgentOutcomeLike,
  type ToolMatcher,
} from './outcome.js';

/** Options every grader factory takes. */
export interface GraderOptions {
  /** Weight in {@link gradeTrial} (default 1). */
  weight?: number;
}

function grader(name: string, options: GraderOptions, grade: Grader['grade']): Grader {
  return { name, ...(options.weight !== undefined ? { weight: options.weight } : {}), grade };
}

/** The share of `items` for which `holds` is true (1 for no items). */
function share<T>(items: readonly T[], holds: (item: T) => boolean): number {
  return items.length === 0 ? 1 : items.filter(holds).length / items.length;
}

/** The attempt completed (`conversation.completed`). */
export function completed(options: GraderOptions = {}): Grader {
  return grader('toHaveCompleted', options, (o) =>
    binaryGrade(
      'toHaveCompleted',
      o.completion.state === 'completed',
      `completion was ${o.completion.state} (${o.completion.reason})`,
    ),
  );
}

/** The failure codes of an outcome (conversation.failed `data.code`). */
export function failureCodes(o: AgentOutcomeLike): string[] {
  return o.fcmp.filter((e) => e.type === 'conversation.failed').map((e) => (e.data as { code: string }).code);
}

/** The attempt failed with `code`. */
export function failedWith(code: string, options: GraderOptions = {}): Grader {
  const name = `toHaveFailedWith(${code})`;
  return grader(name, options, (o) => {
    const codes = failureCodes(o);
    return binaryGrade(
      name,
      o.completion.state === 'failed' && (codes.includes(code) || o.completion.reason === code),
      `completion was ${o.completion.state} (${o.completion.reason}), failure codes [${codes.join(', ')}]`,
    );
  });
}

/** A tool call matched `tool`. */
export function calledTool(tool: ToolMatcher, options: GraderOptions = {}): Grader {
  const name = `toHaveCalledTool(${describeTool(tool)})`;
  return grader(name, options, (o) => {
    const calls = o.toolCalls ?? [];
    const hit = calls.find((call) => toolMatches(call, tool));
    return binaryGrade(
      name,
      hit !== undefined,
      hit ? `called ${hit.name}` : `no tool call of ${calls.length} matched ${describeTool(tool)}`,
    );
  });
}

/** The skill was used: a skill tool call, a read of `<skill>/SKILL.md`, or named in a tool input. */
export function usedSkill(skill: string, options: GraderOptions = {}): Grader {
  const name = `toHaveUsedSkill(${skill})`;
  return grader(name, options, (o) => {
    const pass = (o.toolCalls ?? []).some((call) => callUsesSkill(call, skill));
    return binaryGrade(name, pass, pass ? `a tool call used skill ${skill}` : `no tool call used skill ${skill}`);
  });
}

/** The engine offered the skill to the model (named in its first real model request). */
export function offeredSkill(skill: string, options: GraderOptions = {}): Grader {
  const name = `toHaveOfferedSkill(${skill})`;
  return grader(name, options, (o) => {
    if (o.skillsOffered === null || o.skillsOffered === undefined)
      return binaryGrade(name, false, `cannot tell: no model request was recorded (live mode?)`);
    return binaryGrade(
      name,
      o.skillsOffered.includes(skill),
      `offered: ${o.skillsOffered.join(', ') || 'none'}; injected: ${o.skillsInjected?.join(', ') || 'none'}`,
    );
  });
}

/** Every path was created or modified; partial credit per path. */
export function changedFiles(paths: readonly string[], options: GraderOptions = {}): Grader {
  const name = `toHaveChangedFiles(${paths.join(', ')})`;
  return grader(name, options, (o) => {
    const changed = new Set([...(o.fsDiff?.created ?? []), ...(o.fsDiff?.modified ?? [])]);
    const missing = paths.filter((p) => !changed.has(diffPath(p)));
    return {
      name,
      score: share(paths, (p) => changed.has(diffPath(p))),
      reason:
        missing.length === 0
          ? `changed ${paths.join(', ')}`
          : `not changed: ${missing.join(', ')}; changed: ${[...changed].join(', ') || 'nothing'}`,
    };
  });
}

/** The agent changed exactly these paths, no more, no fewer. */
export function changedExactly(paths: readonly string[], options: GraderOptions = {}): Grader {
  const name = `toHaveChangedExactly(${paths.join(', ')})`;
  return grader(name, options, (o) => {
    const changed = agentChanges(o);
    const wanted = new Set(paths.map(diffPath));
    const missing = [...wanted].filter((p) => !changed.has(p));
    const extra = [...changed].filter((p) => !wanted.has(p));
    return binaryGrade(
      name,
      missing.length === 0 && extra.length === 0,
      `missing: ${missing.join(', ') || 'none'}; unexpected: ${extra.join(', ') || 'none'}; engine bookkeeping (ignored): ${o.fsDiff?.engine_bookkeeping?.join(', ') || 'none'}`,
    );
  });
}

/** None of these paths was created, modified or deleted by the agent; partial credit per path. */
export function leftUnchanged(paths: readonly string[], options: GraderOptions = {}): Grader {
  const name = `toHaveLeftUnchanged(${paths.join(', ')})`;
  return grader(name, options, (o) => {
    const changed = agentChanges(o);
    const touched = paths.filter((p) => changed.has(diffPath(p)));
    return {
      name,
      score: share(paths, (p) => !changed.has(diffPath(p))),
      reason: touched.length === 0 ? `left ${paths.join(', ')} unchanged` : `changed: ${touched.join(', ')}`,
    };
  });
}

/** The last final message equals `expected` (trimmed, done marker ignored) or matches the pattern. */
export function finalMessage(expected: string | RegExp, options: GraderOptions = {}): Grader {
  const name = `toHaveFinalMessage(${String(expected)})`;
  return grader(name, options, (o) => {
    const actual = o.finalMessage ?? null;
    const pass =
      actual !== null &&
      (expected instanceof RegExp ? expected.test(actual) : stripDoneMarker(actual) === expected.trim());
    return binaryGrade(name, pass, `final message ${JSON.stringify(actual)}`);
  });
}

/** How many of `types` appear in order in the outcome's FCMP (not necessarily adjacent). */
export function fcmpSequenceMatched(o: AgentOutcomeLike, types: readonly string[]): number {
  let i = 0;
  for (const event of o.fcmp) if (i < types.length && event.type === types[i]) i += 1;
  return i;
}

/** The FCMP types appear in this order; partial credit for the prefix that does. */
export function fcmpSequence(types: readonly string[], options: GraderOptions = {}): Grader {
  const name = `toHaveFcmpSequence(${types.join(', ')})`;
  return grader(name, options, (o) => {
    const matched = fcmpSequenceMatched(o, types);
    return {
      name,
      score: types.length === 0 ? 1 : matched / types.length,
      reason: matched === types.length ? 'the whole sequence appears' : `matched up to ${types[matched]}`,
    };
  });
}

/**
 * The agent wrote `file` (relative to the run directory) and, when given, its content equals `content` or matches the
 * pattern. Read from the run directory, so it holds for what is on disk, whatever tool wrote it.
 */
export function wroteFile(file: string, content?: string | RegExp, options: GraderOptions = {}): Grader {
  const name = `toHaveWrittenFile(${file})`;
  return grader(name, options, (o) => {
    if (!o.runDir) return binaryGrade(name, false, 'the outcome names no run directory to read the file from');
    const full = path.resolve(o.runDir, file);
    if (!isWithin(full, path.resolve(o.runDir)))
      return binaryGrade(name, false, `${file} is outside the run directory`);
    let text: string;
    try {
      text = fs.readFileSync(full, 'utf8');
    } catch {
      return binaryGrade(name, false, `${file} does not exist in the run directory`);
    }
    if (content === undefined) return binaryGrade(name, true, `${file} exists`);
    const pass = content instanceof RegExp ? content.test(text) : text === content;
    return binaryGrade(
      name,
      pass,
      pass ? `${file} holds the expected content` : `${file} holds ${JSON.stringify(text.slice(0, 200))}`,
    );
  });
}

/**
 * The skill-following stand-in (`follow_skill`) was shown skill `skill`'s body: its final message does not say
 * SKILL_NOT_LOADED, and the attempt completed.
 */
export function followedSkill(skill: string, options: GraderOptions = {}): Grader {
  const name = `followedSkill(${skill})`;
  return grader(name, options, (o) => {
    const text = o.finalMessage ?? '';
    if (text.includes(SKILL_NOT_LOADED))
      return binaryGrade(name, false, `${SKILL_NOT_LOADED}: the engine never showed the model skill ${skill}'s body`);
    return binaryGrade(
      name,
      o.completion.state === 'completed',
      `completion was ${o.completion.state} (${o.completion.reason})`,
    );
  });
}
