/**
 * The provider registry: a provider for every engine is built in; `registerProvider` adds or replaces one.
 */
import { AgentHarnessError } from '../errors/index.js';
import { ENGINE_IDS } from '../protocol/index.js';
import { createEngineProvider } from './engine-provider.js';
import type { AgentProvider } from './types.js';

const providers = new Map<string, AgentProvider>(ENGINE_IDS.map((id) => [id, createEngineProvider(id)]));

/** Adds a provider, or replaces the one of the same name. */
export function registerProvider(provider: AgentProvider): void {
  providers.set(provider.name, provider);
}

/** The provider named `name`; ENGINE_UNKNOWN lists the known ones. */
export function getProvider(name: string): AgentProvider {
  const provider = providers.get(name);
  if (!provider) throw new AgentHarnessError('ENGINE_UNKNOWN', `Unknown provider ${JSON.stringify(name)}. Known providers: ${[...providers.keys()].join(', ')}.`, { details: { provider: name } });
  return provider;
}

/** Names of the registered providers. */
export function providerNames(): string[] {
  return [...providers.keys()];
}
