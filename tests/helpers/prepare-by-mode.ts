/**
 * An engine's `prepare` in one model mode, in a directory of its own under `dir` (`<dir>/<name>/run` and `/home`),
 * cleaned up before the caller looks: what an adapter gives the scripted model and what it gives a live run.
 */
import path from 'node:path';
import type { EngineAdapter } from '../../src/engines/engine.js';

/** What {@link prepareInMode} hands back: the prepared env, and where the run and its home were. */
export interface PreparedInMode {
  env: Record<string, string>;
  runDir: string;
  agentHome: string;
}

/** Runs `adapter.prepare` for `modelMode` (scripted: a model server at http://127.0.0.1:4321), then its cleanup. */
export async function prepareInMode(
  adapter: Pick<EngineAdapter, 'prepare'>,
  dir: string,
  modelMode: 'scripted' | 'live',
  name: string = modelMode,
): Promise<PreparedInMode> {
  const runDir = path.join(dir, name, 'run');
  const agentHome = path.join(dir, name, 'home');
  const prepared = await adapter.prepare({
    runDir,
    agentHome,
    modelMode,
    modelBaseUrl: modelMode === 'live' ? null : 'http://127.0.0.1:4321',
    profile: 'agent-harness',
    interactive: false,
  });
  await prepared.cleanup();
  return { env: prepared.env, runDir, agentHome };
}
