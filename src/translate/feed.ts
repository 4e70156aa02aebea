/**
 * Feeding split lines to a RASP builder, shared by live attempts and recorded translation. PTY text carries
 * terminal noise (escapes, NULs) and util-linux `script` frames its log with "Script started/done on …" lines:
 * parsers get the cleaned text of engine output only, while raw_ref keeps pointing at the untouched bytes.
 * A line the splitter dropped for its length (`overlong`) reaches no parser: it is a LINE_TOO_LONG diagnostic.
 */
import type { SplitLine } from './line-splitter.js';
import type { RaspBuilder } from './rasp-builder.js';
import { cleanTerminalLine } from './terminal-text.js';

const SCRIPT_FRAME = /^Script (started|done) on /;

/** Records one split line (cleaned when it comes from a PTY). */
export function feedLine(builder: RaspBuilder, line: SplitLine): void {
  if (line.overlong) {
    builder.diagnostic(
      {
        code: 'LINE_TOO_LONG',
        message: `a ${line.stream} line of ${line.to - line.from} bytes (offset ${line.from}) is longer than the line limit; it was skipped, not parsed`,
        level: 'warning',
      },
      { stream: line.stream, from: line.from, to: line.to },
    );
    return;
  }
  const text = line.stream === 'pty' ? cleanTerminalLine(line.text) : line.text;
  if (line.stream === 'pty' && SCRIPT_FRAME.test(text)) return;
  // The line is its own raw_ref (the builder copies only stream, from and to into each event).
  builder.line(line.stream, text, line);
}
