/**
 * Whole-JSON-document assembly for gemini-cli output (seed 001, Decision 12). `--output-format json` prints one
 * pretty-printed, multi-line JSON object (on stdout on success, on stderr after the error report on failure),
 * often after noise lines ("YOLO mode is enabled…", stack traces). A document starts at a line whose first
 * character is `{` and ends at the first following line starting with `}` after which the buffered text
 * parses as JSON. Nested lines of a pretty document are indented, so a column-0 `{` always opens a new one.
 */

/** What one fed line turned out to be. */
export type DocumentStep =
  | { kind: 'document'; value: Record<string, unknown>; lines: number }
  | { kind: 'buffered' }
  | { kind: 'line'; text: string }
  | { kind: 'abandoned'; lines: string[] };

/** Upper bound of a buffered document; beyond it the lines are given back as noise. */
const MAX_DOCUMENT_CHARS = 8 * 1024 * 1024;

/** A per-stream assembler of JSON documents. */
export interface DocumentAssembler {
  /** Feeds one line; returns the steps it caused (an abandoned buffer first, then the line's own step). */
  push(text: string): DocumentStep[];
  /** The lines of a document still open at the end of the stream (truncated output), then resets. */
  drain(): string[];
}

function parseObject(text: string): Record<string, unknown> | null {
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'object' && value !== null && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : null;
  } catch {
    return null;
  }
}

/** A fresh assembler for one stream. */
export function createDocumentAssembler(): DocumentAssembler {
  let buffer: string[] = [];
  let size = 0;

  const reset = (): string[] => {
    const lines = buffer;
    buffer = [];
    size = 0;
    return lines;
  };

  return {
    push(text: string): DocumentStep[] {
      const steps: DocumentStep[] = [];
      if (buffer.length > 0 && text.startsWith('{')) steps.push({ kind: 'abandoned', lines: reset() });
      if (buffer.length === 0) {
        if (!text.startsWith('{')) return [...steps, { kind: 'line', text }];
        const whole = parseObject(text);
        if (whole) return [...steps, { kind: 'document', value: whole, lines: 1 }];
      }
      buffer.push(text);
      size += text.length + 1;
      if (text.startsWith('}')) {
        const value = parseObject(buffer.join('\n'));
        if (value) {
          const lines = reset().length;
          return [...steps, { kind: 'document', value, lines }];
        }
      }
      if (size > MAX_DOCUMENT_CHARS) return [...steps, { kind: 'abandoned', lines: reset() }];
      return [...steps, { kind: 'buffered' }];
    },
    drain(): string[] {
      return reset();
    },
  };
}
