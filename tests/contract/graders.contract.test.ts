/**
 * Graders (issue 45 item 4): the matchers' checks as scores in [0, 1] with reasons, combined by weight against a
 * threshold; a grader that throws is a grade error, counted apart; bad weights and thresholds are CONFIG_INVALID.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { gradeTrial } from '../../src/evals/grade-trial.js';
import {
  changedExactly,
  changedFiles,
  completed,
  fcmpSequence,
  followedSkill,
  usedSkill,
  wroteFile,
} from '../../src/evals/graders/checks.js';
import type { AgentOutcomeLike } from '../../src/evals/graders/outcome.js';
import { AgentHarnessError } from '../../src/errors/index.js';
import type { ToolCallRecord } from '../../src/core/attempt-result.js';
import type { FcmpEvent } from '../../src/protocol/index.js';

function outcome(over: Partial<AgentOutcomeLike> = {}): AgentOutcomeLike {
  const runDir = fs.mkdtempSync(path.join(os.tmpdir(), 'graders-'));
  fs.writeFileSync(path.join(runDir, 'greeting.txt'), 'hello from the skill\n');
  return {
    completion: { state: 'completed', reason: 'done_marker' },
    fcmp: [{ type: 'conversation.started' }, { type: 'conversation.completed' }] as unknown as FcmpEvent[],
    fsDiff: { created: ['greeting.txt'], modified: [], deleted: [] } as never,
    toolCalls: [{ kind: 'skill', name: 'Skill', input: { skill: 'greet-file' } } as unknown as ToolCallRecord],
    finalMessage: 'Done.\n__SKILL_DONE__',
    runDir,
    ...over,
  };
}

describe('graders', () => {
  it('score the checks, with partial credit where a check has several items', async () => {
    const o = outcome();
    expect(await completed().grade(o)).toMatchObject({ score: 1, reason: 'completion was completed (done_marker)' });
    expect(await usedSkill('greet-file').grade(o)).toMatchObject({ score: 1 });
    expect(await changedFiles(['greeting.txt', 'other.txt']).grade(o)).toMatchObject({
      score: 0.5,
      reason: expect.stringContaining('not changed: other.txt'),
    });
    expect(await changedExactly(['greeting.txt']).grade(o)).toMatchObject({ score: 1 });
    expect(await fcmpSequence(['conversation.started', 'tool.call', 'conversation.completed']).grade(o)).toMatchObject({
      score: 1 / 3,
      reason: 'matched up to tool.call',
    });
    expect(await wroteFile('greeting.txt', 'hello from the skill\n').grade(o)).toMatchObject({ score: 1 });
    expect(await wroteFile('greeting.txt', /bye/).grade(o)).toMatchObject({ score: 0 });
    expect(await wroteFile('greting.txt').grade(o)).toMatchObject({
      score: 0,
      reason: expect.stringContaining('does not exist'),
    });
    expect(await wroteFile('../outside.txt').grade(o)).toMatchObject({
      score: 0,
      reason: expect.stringContaining('outside'),
    });
    const notLoaded = outcome({
      completion: { state: 'awaiting_input', reason: 'turn_end_without_done_marker' } as never,
      finalMessage: 'agent-harness stand-in: SKILL_NOT_LOADED: the engine never showed …',
    });
    expect(await followedSkill('greet-file').grade(notLoaded)).toMatchObject({
      score: 0,
      reason: expect.stringContaining('SKILL_NOT_LOADED'),
    });
    expect(await followedSkill('greet-file').grade(o)).toMatchObject({ score: 1 });
  });

  it('gradeTrial weighs the grades against the threshold, and a grader error is neither a pass nor a fail', async () => {
    const o = outcome();
    const graded = await gradeTrial(
      o,
      [completed({ weight: 3 }), changedFiles(['greeting.txt', 'other.txt'], { weight: 1 })],
      { threshold: 0.8 },
    );
    expect(graded.score).toBeCloseTo((3 * 1 + 1 * 0.5) / 4);
    expect(graded).toMatchObject({ threshold: 0.8, passed: true, errors: [] });
    expect(graded.grades.map((g) => g.name)).toEqual([
      'toHaveCompleted',
      'toHaveChangedFiles(greeting.txt, other.txt)',
    ]);
    expect((await gradeTrial(o, [changedFiles(['other.txt'])])).passed).toBe(false); // default threshold 1

    const broken = {
      name: 'judge',
      grade: () => {
        throw new AgentHarnessError('JUDGE_FAILED', 'judge judge: its caller failed: down');
      },
    };
    const odd = { name: 'odd', grade: () => ({ name: 'odd', score: 2, reason: '' }) };
    const withErrors = await gradeTrial(o, [completed(), broken, odd], { threshold: 0 });
    expect(withErrors.passed).toBe(false);
    expect(withErrors.score).toBe(1);
    expect(withErrors.errors).toEqual([
      { name: 'judge', code: 'JUDGE_FAILED', message: 'judge judge: its caller failed: down' },
      { name: 'odd', code: 'GRADER_FAILED', message: expect.stringContaining('score 2') },
    ]);
  });

  it('bad thresholds, weights and grader lists are CONFIG_INVALID naming the option', async () => {
    const o = outcome();
    await expect(gradeTrial(o, [completed()], { threshold: 1.5 })).rejects.toMatchObject({
      code: 'CONFIG_INVALID',
      message: expect.stringContaining('threshold must be a number in [0, 1], got 1.5'),
    });
    await expect(gradeTrial(o, [])).rejects.toMatchObject({
      code: 'CONFIG_INVALID',
      message: expect.stringContaining('graders'),
    });
    await expect(gradeTrial(o, [completed({ weight: -1 })])).rejects.toMatchObject({
      message: expect.stringContaining('graders[0].weight (toHaveCompleted)'),
    });
    await expect(gradeTrial(o, [completed({ weight: 0 })])).rejects.toMatchObject({ code: 'CONFIG_INVALID' });
  });
});
