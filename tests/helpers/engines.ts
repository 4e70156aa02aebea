/**
 * The engines a test can run here, from the registry: every engine of `availableEngines()`, and for each why it cannot
 * run on this machine (its executable is not found), so an engine test skips it with that reason instead of failing.
 */
import { availableEngines, getEngine } from '../../src/engines/registry.js';
import { isAgentHarnessError } from '../../src/errors/index.js';
import type { EngineId } from '../../src/protocol/index.js';
import { resolveExecutable } from '../../src/runtime/executables.js';
import { resolveHarnessPaths } from '../../src/runtime/paths.js';

/** Every engine of the registry (a test iterates over these, and skips the ones {@link engineMissingReason} names). */
export function registryEngines(): EngineId[] {
  return availableEngines();
}

/** Why `engine` cannot run here (the registry's executable for it is not found), or null when it can. */
export function engineMissingReason(engine: EngineId): string | null {
  try {
    resolveExecutable(getEngine(engine).executableName, resolveHarnessPaths({ env: {}, projectRoot: process.cwd(), skillRoots: [] }));
    return null;
  } catch (error) {
    if (!isAgentHarnessError(error, 'ENGINE_EXECUTABLE_MISSING')) throw error;
    return `no ${engine} executable (the npm registry reachable here does not serve its CLI)`;
  }
}
