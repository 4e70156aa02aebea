/**
 * The engine registry. Every engine id is accepted; engines whose adapter is not built yet are
 * capability-gated (seed 001, Decision 8): they fail with ENGINE_CAPABILITY_UNAVAILABLE, not as unknown.
 */
import { AgentHarnessError } from '../errors/index.js';
import { ENGINE_ID_VALUES as ENGINE_IDS } from '../protocol/versions.js';
import type { EngineId } from '../protocol/common.js';
import { claudeEngine } from './claude/index.js';
import { codexEngine } from './codex/index.js';
import { geminiEngine } from './gemini/index.js';
import { iflowEngine } from './iflow/index.js';
import { opencodeEngine } from './opencode/index.js';
import type { EngineAdapter } from './engine.js';

const adapters: Partial<Record<EngineId, EngineAdapter>> = { claude: claudeEngine, codex: codexEngine, gemini: geminiEngine, iflow: iflowEngine, opencode: opencodeEngine };

/** True when `id` is a known engine id. */
export function isEngineId(id: string): id is EngineId {
  return (ENGINE_IDS as readonly string[]).includes(id);
}

/** Engine ids whose adapter can run here. */
export function availableEngines(): EngineId[] {
  return ENGINE_IDS.filter((id) => adapters[id] !== undefined);
}

/** The adapter of `id`; ENGINE_UNKNOWN for an unknown id, ENGINE_CAPABILITY_UNAVAILABLE for a gated one. */
export function getEngine(id: string): EngineAdapter {
  if (!isEngineId(id)) {
    throw new AgentHarnessError('ENGINE_UNKNOWN', `Unknown engine ${JSON.stringify(id)}. Known engines: ${ENGINE_IDS.join(', ')}.`, { details: { engine: id } });
  }
  const adapter = adapters[id];
  if (!adapter) {
    throw new AgentHarnessError('ENGINE_CAPABILITY_UNAVAILABLE', `Engine "${id}" cannot execute yet (capability "execute" is unavailable); available: ${availableEngines().join(', ')}.`, {
      details: { engine: id, capability: 'execute' },
    });
  }
  return adapter;
}

/** Throws ENGINE_CAPABILITY_UNAVAILABLE when the adapter lacks resume. */
export function requireResume(adapter: EngineAdapter): NonNullable<EngineAdapter['buildResumeArgs']> {
  if (!adapter.buildResumeArgs) {
    throw new AgentHarnessError('ENGINE_CAPABILITY_UNAVAILABLE', `Engine "${adapter.id}" cannot resume a session (capability "resume" is unavailable).`, {
      details: { engine: adapter.id, capability: 'resume' },
    });
  }
  return adapter.buildResumeArgs;
}
