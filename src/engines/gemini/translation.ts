/**
 * What translating recorded gemini output needs, loadable without the adapter that runs gemini (config writers, agent
 * options): its parser and error patterns. The registry loads it for `translate` and for sealing an orphaned attempt.
 */
import type { TranslationAdapter } from '../engine.js';
import { geminiErrorPatterns } from './errors.js';
import { createGeminiParser } from './parse.js';

/** The gemini translation adapter (the full adapter in `index.ts` carries the same members). */
export const geminiTranslation: TranslationAdapter = {
  id: 'gemini',
  createParser: createGeminiParser,
  errorPatterns: geminiErrorPatterns,
};
