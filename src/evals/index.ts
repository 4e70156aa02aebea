/**
 * Evals (issue 45): trials, their statistics, arms and lift, trigger evals, gates and the comparison of two runs, over
 * attempt results and trial records only; used by the Vitest layer, the providers and the CLI alike.
 */
export * from './classify.js';
export * from './compare.js';
export * from './gates.js';
export type * from './grade.js';
export * from './lift.js';
export * from './run-trials.js';
export * from './skill-load.js';
export * from './stats.js';
export * from './summarize.js';
export * from './trial-options.js';
export * from './trial-record.js';
export * from './trigger.js';
export * from './vitest-evals.js';
