/**
 * What translating recorded qwen output needs, loadable without the adapter that runs qwen (config writers, agent
 * options): its parser and error patterns. The registry loads it for `translate` and for sealing an orphaned attempt.
 */
import type { TranslationAdapter } from '../engine.js';
import { qwenErrorPatterns } from './errors.js';
import { createQwenParser } from './parse.js';

/** The qwen translation adapter (the full adapter in `index.ts` carries the same members). */
export const qwenTranslation: TranslationAdapter = {
  id: 'qwen',
  createParser: createQwenParser,
  errorPatterns: qwenErrorPatterns,
};
