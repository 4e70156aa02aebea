/**
 * What to do when an engine's executable is missing: install that engine's own package at the version agent-harness
 * is tested with (the ENGINE_EXECUTABLE_MISSING hint, and the doctor's "not installed" line).
 */
import { installCommand } from '../runtime/pinned-packages.js';
import type { EngineAdapter } from './engine.js';

/** The install hint for `adapter`'s CLI: its package at the pinned version, or PATH when no package is served. */
export function engineInstallHint(
  adapter: Pick<EngineAdapter, 'id' | 'executableName' | 'packageName'> &
    Partial<Pick<EngineAdapter, 'checkedVersions'>>,
): string {
  if (!adapter.packageName)
    return `${adapter.id} has no npm package served here: put its \`${adapter.executableName}\` executable on PATH.`;
  return `Install ${adapter.id}'s CLI as a dev dependency of your project (${installCommand(adapter.packageName, typeof adapter.checkedVersions === 'string' ? adapter.checkedVersions : undefined)}, the version agent-harness is tested with) or put \`${adapter.executableName}\` on PATH.`;
}
