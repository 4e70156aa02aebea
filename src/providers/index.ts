/**
 * Providers (seed 003): one typed interface over every engine.
 */
export { AgentProviderConfigSchema, McpServerDefSchema, parseProviderConfig } from './config.js';
export type { AgentProviderConfig, McpServerDef, ResolvedAgentProviderConfig } from './config.js';
export { createEngineProvider } from './engine-provider.js';
export { getProvider, providerNames, registerProvider } from './registry.js';
export type { AgentProvider } from './types.js';
export { runProviderTrials } from './trials.js';
export type { ProviderTrialsOptions, ProviderTrialsResult } from './trials.js';
