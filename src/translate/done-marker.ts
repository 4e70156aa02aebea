/**
 * The done marker out of user-facing text. The completion contract asks the agent to end its turn with
 * `__SKILL_DONE__` (or `{"__skill_done__": true}`); the judge reads it from the raw events, and the raw audit keeps
 * it. Everything a person or a next agent reads (the ACP editor's chat, ATIF step messages, the fluent
 * `finalMessage`, the Vitest `finalText`, the `runs` table) goes through one of these two functions, so none of them
 * shows it.
 */
import { DONE_MARKER } from '../protocol/versions.js';

/** `text` without the done marker: the `__SKILL_DONE__` token (and its line) and a trailing `{"__skill_done__": true}` block. */
export function stripDoneMarker(text: string | null): string | null {
  if (text === null) return null;
  return text
    .replace(/(?:```(?:json)?\s*)?\{\s*"__skill_done__"\s*:\s*true\s*\}(?:\s*```)?\s*$/, '')
    .split('\n')
    .filter((line) => line.trim() !== DONE_MARKER)
    .join('\n')
    .replaceAll(DONE_MARKER, '')
    .trim();
}

/** A filter of streamed text (message deltas): what {@link createDoneMarkerFilter} returns. */
export interface DoneMarkerFilter {
  /** The next delta without the marker; a tail that may begin the marker is held back until the next delta. */
  push(delta: string): string;
  /** What is still held back (the message ended): send it after the last delta. */
  flush(): string;
}

/**
 * Strips the `__SKILL_DONE__` token from a message that arrives in deltas, even when the token is split across two
 * of them (gemini streams its answer in chunks of any size). The JSON form is left to {@link stripDoneMarker}, which
 * whole messages go through.
 */
export function createDoneMarkerFilter(): DoneMarkerFilter {
  let held = '';
  return {
    push(delta) {
      let text = held + delta;
      // Removing one token can join two halves into another: repeat until none is left.
      while (text.includes(DONE_MARKER)) text = text.replaceAll(DONE_MARKER, '');
      let keep = 0;
      for (let n = Math.min(DONE_MARKER.length - 1, text.length); n > 0; n--)
        if (DONE_MARKER.startsWith(text.slice(-n))) {
          keep = n;
          break;
        }
      held = text.slice(text.length - keep);
      return text.slice(0, text.length - keep);
    },
    flush() {
      const out = held;
      held = '';
      return out;
    },
  };
}
