/** Graders and judges (issue 45 item 4): the matchers' checks as graders, `gradeTrial`, the LLM judge and its cassette. */
export * from './checks.js';
export type { Grader } from './grader.js';
export type { AgentOutcomeLike, ToolCallPattern, ToolMatcher } from './outcome.js';
export { gradeTrial, type GradeTrialOptions } from '../grade-trial.js';
export { llmJudge, parseJudgeAnswer, JUDGE_SYSTEM_PROMPT, type JudgeOptions } from '../judge.js';
export { openJudgeCassette, type JudgeCassette, type JudgeCassetteOptions } from '../judge-cassette.js';
export type { Grade, GradeError, GradedTrial, FailureClass } from '../grade.js';
