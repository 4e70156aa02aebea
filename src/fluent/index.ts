/** The fluent harness (seed 002): compose agents into phases and tasks, observe them, record and replay. */
export * from './events.js';
export * from './helpers.js';
export * from './recording.js';
export * from './harness-types.js';
export * from './define-harness.js';
export * from './wrap-agent.js';
export * from './narration.js';
export { CallLedger } from './agent-proxy.js';
export * from './attempt-agent.js';
