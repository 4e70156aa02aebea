/**
 * What translating recorded copilot output needs, loadable without the adapter that runs copilot (config writers,
 * agent options): its parser and error patterns. The registry loads it for `translate` and for sealing an orphaned
 * attempt.
 */
import type { TranslationAdapter } from '../engine.js';
import { copilotErrorPatterns } from './errors.js';
import { createCopilotParser } from './parse.js';

/** The copilot translation adapter (the full adapter in `index.ts` carries the same members). */
export const copilotTranslation: TranslationAdapter = {
  id: 'copilot',
  createParser: createCopilotParser,
  errorPatterns: copilotErrorPatterns,
};
