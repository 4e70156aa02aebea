/**
 * Terminal noise in PTY captures: ANSI escape sequences (colors, cursor moves, OSC titles) and NUL bytes
 * that terminals emit around output. Parsers get the cleaned text; the raw log keeps every byte.
 */
import stripAnsi from 'strip-ansi';

/** The line without ANSI escapes, NULs and other C0 controls except tab. */
export function cleanTerminalLine(text: string): string {
  // eslint-disable-next-line no-control-regex
  return stripAnsi(text).replace(/[\u0000-\u0008\u000b-\u001f\u007f]/g, '');
}
