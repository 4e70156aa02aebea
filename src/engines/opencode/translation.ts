/**
 * What translating recorded opencode output needs, loadable without the adapter that runs opencode (config writers, agent
 * options): its parser and error patterns. The registry loads it for `translate` and for sealing an orphaned attempt.
 */
import type { TranslationAdapter } from '../engine.js';
import { opencodeErrorPatterns } from './errors.js';
import { createOpencodeParser, OPENCODE_CACHE_REPORTED_APART } from './parse.js';

/** The opencode translation adapter (the full adapter in `index.ts` carries the same members). */
export const opencodeTranslation: TranslationAdapter = {
  id: 'opencode',
  createParser: createOpencodeParser,
  errorPatterns: opencodeErrorPatterns,
  cacheReportedApart: OPENCODE_CACHE_REPORTED_APART,
};
