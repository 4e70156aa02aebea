/**
 * What translating recorded codex output needs, loadable without the adapter that runs codex (config writers, agent
 * options): its parser and error patterns. The registry loads it for `translate` and for sealing an orphaned attempt.
 */
import type { TranslationAdapter } from '../engine.js';
import { codexErrorPatterns } from './errors.js';
import { createCodexParser, CODEX_TURN_SCOPED_IDS } from './parse.js';

/** The codex translation adapter (the full adapter in `index.ts` carries the same members). */
export const codexTranslation: TranslationAdapter = {
  id: 'codex',
  createParser: createCodexParser,
  errorPatterns: codexErrorPatterns,
  turnScopedIds: CODEX_TURN_SCOPED_IDS,
};
