/**
 * Translate views 1–3 written as the events are produced (the streamed `translate` command): the text is exactly
 * what the string renderers of `views.ts` give for the whole attempt, handed to `write` piece by piece.
 */
import type { FcmpEvent, RaspEvent } from '../protocol/index.js';
import type { TranslationSink } from './recorded-stream.js';
import { MARKDOWN_VIEW_HEADING, markdownItem } from './views.js';

/** A view being written: the sink to translate into, and `end()` once the translation is done. */
export interface ViewWriter {
  /** Receives the events; writes the view's text through `write`. */
  sink: TranslationSink;
  /** Writes what the view still owes (a final newline when nothing was written). */
  end(): void;
}

/**
 * Streams view `mode` through `write` (`drain` is passed on as the sink's backpressure hook). View 1 leaves out
 * `raw.line` events, as {@link renderRaspView} does.
 */
export function createViewWriter(
  mode: 1 | 2 | 3,
  write: (text: string) => void,
  drain?: () => Promise<void> | void,
): ViewWriter {
  let written = false;
  const out = (text: string): void => {
    written = true;
    write(text);
  };
  const sink: TranslationSink = drain ? { drain } : {};
  if (mode === 1) {
    sink.rasp = (event: RaspEvent) => {
      if (event.data.type !== 'raw.line') out(`${JSON.stringify(event)}\n`);
    };
  } else if (mode === 2) {
    sink.fcmp = (event: FcmpEvent) => out(`${JSON.stringify(event)}\n`);
  } else {
    out(`${MARKDOWN_VIEW_HEADING}\n\n`);
    sink.fcmp = (event: FcmpEvent) => {
      const item = markdownItem(event);
      if (item !== null) out(`${item}\n`);
    };
  }
  return {
    sink,
    end() {
      // The renderers' text always ends with a newline; the command adds one to an empty view.
      if (!written) write('\n');
    },
  };
}
