/**
 * Each engine's output parsing alone (its parser and error table), loaded on demand: translating or sealing a
 * recording needs one engine's parser, not every engine's config, skills and process code (the registry).
 */
import { AgentHarnessError } from '../errors/index.js';
import { ENGINE_IDS } from '../protocol/index.js';
import type { EngineAdapter } from './engine.js';

/** What translating an engine's output needs. */
export type EngineParsing = Pick<EngineAdapter, 'id' | 'createParser' | 'errorPatterns'>;

/** Loads the parsing of engine `id`; ENGINE_UNKNOWN for an unknown id (as the registry says it). */
export async function loadEngineParsing(id: string): Promise<EngineParsing> {
  switch (id) {
    case 'codex': {
      const [{ createCodexParser }, { codexErrorPatterns }] = await Promise.all([import('./codex/parse.js'), import('./codex/errors.js')]);
      return { id, createParser: createCodexParser, errorPatterns: codexErrorPatterns };
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
      throw new AgentHarnessError('ENGINE_UNKNOWN', `Unknown engine ${JSON.stringify(id)}. Known engines: ${ENGINE_IDS.join(', ')}.`, { details: { engine: id } });
  }
}
