/**
 * What every engine's `recoverSession` shares (an interactive attempt's session, read back from the engine's own
 * session store): picking the newest of the candidate files, and the events it hands back, opened by the
 * `SESSION_RECOVERED_FROM_STORE` diagnostic that names the file they came from.
 */
import fs from 'node:fs';
import { readLinesSync } from '../runtime/bounded-input.js';
import type { ParserOutput } from './engine.js';
import { isObject, type Json } from './parse-helpers.js';

/** The candidate whose file was modified last (a file gone meanwhile counts as the oldest), or undefined. */
export function newestFile<T extends { file: string }>(candidates: readonly T[]): T | undefined {
  return candidates
    .map((candidate) => ({ candidate, mtime: fs.statSync(candidate.file, { throwIfNoEntry: false })?.mtimeMs ?? 0 }))
    .sort((a, b) => b.mtime - a.mtime)[0]?.candidate;
}

/** The recovered session's events, read lazily: first the diagnostic naming `file`, then `events`. */
export function recoveredFrom(file: string, events: Iterable<ParserOutput>): Iterable<ParserOutput> {
  return (function* () {
    yield {
      type: 'diagnostic',
      diagnostic: {
        code: 'SESSION_RECOVERED_FROM_STORE',
        message: `the interactive attempt printed no events; its session was read from ${file}`,
        level: 'info',
      },
    } satisfies ParserOutput;
    yield* events;
  })();
}

/**
 * The JSON objects of a JSONL session file (a gemini or qwen chat), read as they are asked for: a line cut by a
 * killed process is skipped (the rest is still evidence), and an unreadable file (gone, not a regular file) ends it.
 */
export function* readJsonRecordsSync(file: string, what: string): Generator<Json> {
  try {
    for (const text of readLinesSync(file, { what }, true)) {
      if (!text.trim()) continue;
      try {
        const value: unknown = JSON.parse(text);
        if (isObject(value)) yield value;
      } catch {
        // A cut line: skipped.
      }
    }
  } catch {
    // Unreadable: no more evidence in it.
  }
}
