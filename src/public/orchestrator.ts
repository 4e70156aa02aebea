/**
 * Package entry `agent-harness/orchestrator`: compose an assistant from small harnesses with LLM callers
 * bound to their models (OpenAI Chat Completions, Anthropic Messages, or scripted for unit tests).
 */
export * from '../orchestrator/index.js';
