/** The grader contract: one check of one trial, giving a {@link Grade}. */
import type { Grade } from '../grade.js';
import type { AgentOutcomeLike } from './outcome.js';

/**
 * Grades one trial. A grader that cannot grade (a judge whose caller failed) throws an `AgentHarnessError` with its
 * code (`JUDGE_FAILED`): {@link gradeTrial} records it as a `GradeError`, never a pass or a fail.
 */
export interface Grader {
  /** The name grades and reports show (`toHaveWrittenFile(greeting.txt)`, `judge:rubric`). */
  readonly name: string;
  /** Its weight when the grades of a trial combine (default 1; 0 reports it without counting it). */
  readonly weight?: number;
  /** The grade of `outcome`: a score in [0, 1] and why. */
  grade(outcome: AgentOutcomeLike): Grade | Promise<Grade>;
}

/** A grade of a pass/fail check: 1 when `pass`, else 0. */
export function binaryGrade(name: string, pass: boolean, reason: string): Grade {
  return { name, score: pass ? 1 : 0, reason };
}
