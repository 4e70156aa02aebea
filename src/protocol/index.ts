/** Every protocol schema and type of agent-harness. */
export * from './common.js';
export * from './rasp.js';
export * from './fcmp.js';
export * from './meta.js';
export * from './run-index.js';
export * from './fs-diff.js';
export * from './conformance.js';
export * from './agent-event.js';
export * from './agent-options.js';
