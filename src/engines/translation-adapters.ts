/**
 * What translating recorded output needs of an engine — its parser, its error patterns, whether its ids are
 * turn-scoped — loaded alone: `translate` reads an engine's output without the adapter that runs it (config
 * writers, leases, TOML, agent options), so a translation starts without loading what it never uses (zod included).
 * The full adapters (`registry.ts`) carry the same values.
 */
import { AgentHarnessError } from '../errors/index.js';
import { ENGINE_ID_VALUES } from '../protocol/versions.js';
import type { EngineAdapter } from './engine.js';

/** The part of an {@link EngineAdapter} a recorded translation uses. */
export type TranslationAdapter = Pick<EngineAdapter, 'id' | 'createParser' | 'errorPatterns' | 'turnScopedIds'>;

/** The translation adapter of engine `id`; ENGINE_UNKNOWN (as `getEngine`) for an unknown id. */
export async function loadTranslationAdapter(id: string): Promise<TranslationAdapter> {
  switch (id) {
    case 'codex': {
      const [{ createCodexParser, CODEX_TURN_SCOPED_IDS }, { codexErrorPatterns }] = await Promise.all([import('./codex/parse.js'), import('./codex/errors.js')]);
      return { id, createParser: createCodexParser, errorPatterns: codexErrorPatterns, turnScopedIds: CODEX_TURN_SCOPED_IDS };
    }
    case 'claude': {
      const [{ createClaudeParser }, { claudeErrorPatterns }] = await Promise.all([import('./claude/parse.js'), import('./claude/errors.js')]);
      return { id, createParser: createClaudeParser, errorPatterns: claudeErrorPatterns };
    }
    case 'gemini': {
      const [{ createGeminiParser }, { geminiErrorPatterns }] = await Promise.all([import('./gemini/parse.js'), import('./gemini/errors.js')]);
      return { id, createParser: createGeminiParser, errorPatterns: geminiErrorPatterns };
    }
    case 'iflow': {
      const [{ createIflowParser }, { iflowErrorPatterns }] = await Promise.all([import('./iflow/parse.js'), import('./iflow/errors.js')]);
      return { id, createParser: createIflowParser, errorPatterns: iflowErrorPatterns };
    }
    case 'opencode': {
      const [{ createOpencodeParser }, { opencodeErrorPatterns }] = await Promise.all([import('./opencode/parse.js'), import('./opencode/errors.js')]);
      return { id, createParser: createOpencodeParser, errorPatterns: opencodeErrorPatterns };
    }
    default:
      throw new AgentHarnessError('ENGINE_UNKNOWN', `Unknown engine ${JSON.stringify(id)}. Known engines: ${ENGINE_ID_VALUES.join(', ')}.`, { details: { engine: id } });
  }
}
