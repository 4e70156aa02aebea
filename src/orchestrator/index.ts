/** Harness orchestration (seed 004): contracts, LLM callers, RecordKeeper, Orchestrator, the packaged harnesses. */
export * from './types.js';
export * from './bind-model.js';
export * from './call-with-retries.js';
export * from './openai-chat-caller.js';
export * from './anthropic-messages-caller.js';
export * from './scripted-caller.js';
export * from './record-keeper.js';
export * from './run-phase.js';
export * from './config.js';
export * from './orchestrator.js';
export * from './scripted-endpoint.js';
export * from './harness/index.js';
export type { VendorErrorClasses } from './vendor-error-classes.js';
