/**
 * The provider registry: every engine of the engine registry has a provider (made when first asked for, so an engine
 * registered at run time has one too); `registerProvider` adds or replaces one.
 */
import { engineIds, isEngineId } from '../engines/registry.js';
import { AgentHarnessError } from '../errors/index.js';
import { createEngineProvider } from './engine-provider.js';
import type { AgentProvider } from './types.js';

/** Providers registered by name. */
const providers = new Map<string, AgentProvider>();
/** Providers made for registered engines, when first asked for. */
const engineProviders = new Map<string, AgentProvider>();

/** Adds a provider, or replaces the one of the same name. */
export function registerProvider(provider: AgentProvider): void {
  providers.set(provider.name, provider);
}

/** The provider named `name`: a registered one, else the one of the engine `name`; ENGINE_UNKNOWN lists the known ones. */
export function getProvider(name: string): AgentProvider {
  const provider = providers.get(name);
  if (provider) return provider;
  if (!isEngineId(name))
    throw new AgentHarnessError(
      'ENGINE_UNKNOWN',
      `Unknown provider ${JSON.stringify(name)}. Known providers: ${providerNames().join(', ')}.`,
      { details: { provider: name } },
    );
  let made = engineProviders.get(name);
  if (!made) {
    made = createEngineProvider(name);
    engineProviders.set(name, made);
  }
  return made;
}

/** Names of the providers: one per registered engine, then those registered under other names. */
export function providerNames(): string[] {
  return [...new Set([...engineIds(), ...providers.keys()])];
}
