/**
 * What translating recorded iflow output needs, loadable without the adapter that runs iflow (config writers, agent
 * options): its parser and error patterns. The registry loads it for `translate` and for sealing an orphaned attempt.
 */
import type { TranslationAdapter } from '../engine.js';
import { iflowErrorPatterns } from './errors.js';
import { createIflowParser } from './parse.js';

/** The iflow translation adapter (the full adapter in `index.ts` carries the same members). */
export const iflowTranslation: TranslationAdapter = {
  id: 'iflow',
  createParser: createIflowParser,
  errorPatterns: iflowErrorPatterns,
};
