/** Errors of agent-harness: one class, stable codes. */
export * from './codes.js';
export * from './agent-harness-error.js';
export * from './parse-config.js';
