/**
 * What translating recorded claude output needs, loadable without the adapter that runs claude (config writers, agent
 * options): its parser and error patterns. The registry loads it for `translate` and for sealing an orphaned attempt.
 */
import type { TranslationAdapter } from '../engine.js';
import { claudeErrorPatterns } from './errors.js';
import { CLAUDE_CACHE_REPORTED_APART, createClaudeParser } from './parse.js';

/** The claude translation adapter (the full adapter in `index.ts` carries the same members). */
export const claudeTranslation: TranslationAdapter = {
  id: 'claude',
  createParser: createClaudeParser,
  errorPatterns: claudeErrorPatterns,
  cacheReportedApart: CLAUDE_CACHE_REPORTED_APART,
};
