/**
 * The vocabulary shared by trials, graders and judges (issue 45): what one grader says of one trial, how the grades of
 * a trial combine, and how a failed trial is classified. Types only; the statistics, graders and judges build on them.
 */

/** One grader's verdict on one trial: a score in [0, 1] and why. */
export interface Grade {
  /** The grader's name as reports show it (`toHaveWrittenFile`, `judge:rubric`). */
  readonly name: string;
  /** In [0, 1]; 1 is a full pass. */
  readonly score: number;
  /** Why, in a sentence or two a user can act on. */
  readonly reason: string;
}

/** A grader or judge that could not give a grade (a judge's caller failed, say): never a pass or a fail. */
export interface GradeError {
  /** The grader's name. */
  readonly name: string;
  /** The stable error code (`JUDGE_FAILED`, ...). */
  readonly code: string;
  /** What went wrong, for the report. */
  readonly message: string;
}

/** The grades of one trial combined: the weighted score, whether it meets the threshold, and each part. */
export interface GradedTrial {
  /** The weighted mean of the grades' scores, in [0, 1]. */
  readonly score: number;
  /** The threshold the score was held against. */
  readonly threshold: number;
  /** `score >= threshold`, and no grader failed to grade. */
  readonly passed: boolean;
  /** Each grade, in the order the graders were given. */
  readonly grades: readonly Grade[];
  /** Graders that could not grade; a trial with any is counted apart, never as a pass or a fail. */
  readonly errors: readonly GradeError[];
}

/**
 * Why a trial failed, classified from its audit evidence and stable codes. Only `model` (refusal, no answer) and
 * `task` (the checks or graders failed) count against a pass rate; `infrastructure` (the harness, the host, a vendor's
 * 5xx or 429), `engine` (crash, protocol) and `judge` (a grader could not grade) are reported apart.
 */
export type FailureClass = 'infrastructure' | 'engine' | 'model' | 'task' | 'judge';
