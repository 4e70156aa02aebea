/**
 * The engines a test can run here, from the registry: every engine of `availableEngines()`, and for each why it cannot
 * run on this machine (its executable is not found), so an engine test skips it with that reason instead of failing.
 * The registry is read here only, so engine tests follow it wherever it goes.
 */
import type { EngineAdapter, WireApi } from '../../src/engines/engine.js';
import { availableEngines, loadEngine } from '../../src/engines/registry.js';
import { isAgentHarnessError } from '../../src/errors/index.js';
import type { EngineId } from '../../src/protocol/index.js';
import { resolveExecutable } from '../../src/runtime/executables.js';
import { resolveHarnessPaths } from '../../src/runtime/paths.js';
import { ENGINES_ENV, enabledEngines } from '../../src/vitest/options.js';

/** The registry's adapter of `engine`. */
async function adapterOf(engine: EngineId): Promise<EngineAdapter> {
  return loadEngine(engine);
}

/**
 * Every engine of the registry (a test iterates over these, and skips the ones {@link engineMissingReason} names),
 * narrowed to those `AGENT_HARNESS_ENGINES` names when it is set: the drift check runs the whole engine project on
 * one engine that way, and the plugin skips a test that starts another.
 */
export function registryEngines(): EngineId[] {
  const enabled = enabledEngines(undefined, process.env);
  return enabled ? availableEngines().filter((engine) => enabled.includes(engine)) : availableEngines();
}

/**
 * Why `engine` cannot run here (the executable its adapter names is not found, or `AGENT_HARNESS_ENGINES` leaves it
 * out), or null when it can.
 */
export async function engineMissingReason(engine: EngineId): Promise<string | null> {
  if (!registryEngines().includes(engine)) return `${engine} is not among ${ENGINES_ENV}=${process.env[ENGINES_ENV]}`;
  const { executableName } = await adapterOf(engine);
  try {
    resolveExecutable(executableName, resolveHarnessPaths({ env: {}, projectRoot: process.cwd(), skillRoots: [] }));
    return null;
  } catch (error) {
    if (!isAgentHarnessError(error, 'ENGINE_EXECUTABLE_MISSING')) throw error;
    return `no ${executableName} executable for ${engine} (the npm registry reachable here does not serve its CLI)`;
  }
}

/** Why each engine of the registry cannot run here (null: it can), by engine. */
export async function missingReasons(): Promise<Partial<Record<EngineId, string | null>>> {
  return Object.fromEntries(
    await Promise.all(registryEngines().map(async (engine) => [engine, await engineMissingReason(engine)] as const)),
  );
}

/** The registry's adapter of every engine, by engine: what a test reads an engine's declared facts from. */
export async function engineAdapters(): Promise<Partial<Record<EngineId, EngineAdapter>>> {
  return Object.fromEntries(
    await Promise.all(registryEngines().map(async (engine) => [engine, await adapterOf(engine)] as const)),
  );
}

/** The wire API of the scripted model server `engine` talks to. */
export async function engineWireApi(engine: EngineId): Promise<WireApi> {
  return (await adapterOf(engine)).tools.wire;
}

/** Every vendor variable some engine of the registry passes through in live mode (none may pass in scripted mode). */
export async function liveEnvKeys(): Promise<string[]> {
  const adapters = await Promise.all(registryEngines().map(adapterOf));
  return [...new Set(adapters.flatMap((adapter) => adapter.liveEnvKeys))].sort();
}
