/**
 * Combines the grades of one trial (issue 45): each grader's score, weighted, against a threshold. A grader that
 * could not grade (a judge whose caller failed) is a {@link GradeError}, and a trial with any is neither a pass nor a
 * fail of the skill: `passed` is false and the statistics count it apart (`FailureClass` `judge`).
 */
import { AgentHarnessError, isAgentHarnessError } from '../errors/index.js';
import type { Grade, GradedTrial, GradeError } from './grade.js';
import type { Grader } from './graders/grader.js';
import type { AgentOutcomeLike } from './graders/outcome.js';

/** Options of {@link gradeTrial}. */
export interface GradeTrialOptions {
  /** The weighted score a trial needs to pass, in [0, 1] (default 1: every grader fully satisfied). */
  threshold?: number;
}

/** CONFIG_INVALID naming `option` and the bad `value`. */
function invalid(option: string, value: unknown, what: string): AgentHarnessError {
  return new AgentHarnessError('CONFIG_INVALID', `${option} must be ${what}, got ${JSON.stringify(value)}.`, {
    details: { option, value },
  });
}

/** Checks the graders and the threshold before any grading: a bad value is the user's, named. */
function checkInput(graders: readonly Grader[], threshold: number): void {
  if (typeof threshold !== 'number' || !Number.isFinite(threshold) || threshold < 0 || threshold > 1)
    throw invalid('threshold', threshold, 'a number in [0, 1]');
  if (graders.length === 0) throw invalid('graders', [], 'at least one grader');
  for (const [i, g] of graders.entries()) {
    if (!g || typeof g.grade !== 'function' || typeof g.name !== 'string')
      throw invalid(`graders[${i}]`, g, 'a grader ({ name, grade(outcome) })');
    const weight = g.weight ?? 1;
    if (typeof weight !== 'number' || !Number.isFinite(weight) || weight < 0)
      throw invalid(`graders[${i}].weight (${g.name})`, weight, 'a finite number >= 0');
  }
  if (graders.every((g) => (g.weight ?? 1) === 0))
    throw invalid('graders[].weight', 0, 'positive for one grader at least');
}

/** A grade as the grader gave it, checked: a score outside [0, 1] is the grader's bug, reported as GRADER_FAILED. */
function checkedGrade(grader: Grader, grade: Grade): Grade {
  if (!grade || typeof grade.score !== 'number' || !(grade.score >= 0 && grade.score <= 1))
    throw new AgentHarnessError(
      'GRADER_FAILED',
      `grader ${grader.name} gave score ${JSON.stringify(grade?.score)}, not a number in [0, 1].`,
    );
  return { name: grade.name || grader.name, score: grade.score, reason: String(grade.reason ?? '') };
}

/** What a grader's failure to grade becomes. */
function gradeError(grader: Grader, error: unknown): GradeError {
  if (isAgentHarnessError(error)) return { name: grader.name, code: error.code, message: error.message };
  return {
    name: grader.name,
    code: 'GRADER_FAILED',
    message: `grader ${grader.name} threw: ${(error as Error)?.message ?? String(error)}`,
  };
}

/**
 * Grades `outcome` (a `HarnessRun` or an `AttemptResult`) with every grader (at once: judges wait on the network) and
 * combines them: `score` is the weighted mean of the grades, `passed` is `score >= threshold` with no grader error.
 * CONFIG_INVALID for a threshold outside [0, 1], no graders, or a negative weight.
 */
export async function gradeTrial(
  outcome: AgentOutcomeLike,
  graders: readonly Grader[],
  options: GradeTrialOptions = {},
): Promise<GradedTrial> {
  const threshold = options.threshold ?? 1;
  checkInput(graders, threshold);
  const settled = await Promise.all(
    graders.map(async (grader) => {
      try {
        return { grade: checkedGrade(grader, await grader.grade(outcome)), weight: grader.weight ?? 1, error: null };
      } catch (error) {
        return { grade: null, weight: 0, error: gradeError(grader, error) };
      }
    }),
  );
  const grades: Grade[] = [];
  const errors: GradeError[] = [];
  let total = 0;
  let weights = 0;
  for (const item of settled) {
    if (item.error) {
      errors.push(item.error);
      continue;
    }
    if (!item.grade) continue;
    grades.push(item.grade);
    total += item.grade.score * item.weight;
    weights += item.weight;
  }
  const score = weights > 0 ? total / weights : 0;
  return { score, threshold, passed: errors.length === 0 && score >= threshold, grades, errors };
}
