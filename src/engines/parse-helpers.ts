/**
 * Small total functions every engine parser uses to read untrusted JSON and report doubts: none throws.
 */
import type { Diagnostic, StreamName } from '../protocol/index.js';
import type { ParserOutput } from './engine.js';

/** A parsed JSON object. */
export type Json = Record<string, unknown>;

/** Longest excerpt of a raw line quoted in a diagnostic. */
export const MAX_EXCERPT = 200;

/** A diagnostic parser output. */
export function diag(code: string, message: string, level: Diagnostic['level'] = 'warning'): ParserOutput {
  return { type: 'diagnostic', diagnostic: { code, message, level } };
}

/** `text` cut to {@link MAX_EXCERPT} characters. */
export function excerpt(text: string): string {
  return text.length > MAX_EXCERPT ? `${text.slice(0, MAX_EXCERPT)}…` : text;
}

/** True for a plain JSON object (not null, not an array). */
export function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The value when it is a string, else null. */
export function str(value: unknown): string | null {
  return typeof value === 'string' ? value : null;
}

/** The value when it is a safe integer, else null. */
export function int(value: unknown): number | null {
  return typeof value === 'number' && Number.isSafeInteger(value) ? value : null;
}

/** The value when it is a non-negative safe integer (a token count), else null. */
export function count(value: unknown): number | null {
  const n = int(value);
  return n !== null && n >= 0 ? n : null;
}

/**
 * A PTY merges stdout and stderr and echoes terminal input (`^@`, `^D`) in front of output: a line holding a
 * JSON event (`{"type"…`) after such noise is cut to start at the event, with an info diagnostic saying what
 * was dropped. Other lines come back unchanged.
 */
export function stripPtyEcho(text: string): { text: string; noise: ParserOutput | null } {
  const start = text.indexOf('{"type"');
  if (start <= 0 || text.slice(0, start).trim() === '') return { text, noise: null };
  return {
    text: text.slice(start),
    noise: diag(
      'PTY_NOISE_STRIPPED',
      `ignored ${JSON.stringify(text.slice(0, Math.min(start, 40)))} before a JSON event`,
      'info',
    ),
  };
}

/**
 * One stdout line of a JSONL engine stream as an event object with a string `type`, handed to `onEvent` with the
 * line's text: a blank line gives nothing; a line that is not JSON, or not such an object, a STREAM_PARSE_ERROR
 * naming the engine (`a codex event object`).
 */
export function parseEventLine(
  text: string,
  what: string,
  onEvent: (event: Json & { type: string }, text: string) => ParserOutput[],
): ParserOutput[] {
  // A line that opens an object (nearly every line) is not blank: only the others are trimmed to see.
  if (text.charCodeAt(0) !== 0x7b && text.trim() === '') return [];
  let event: unknown;
  try {
    event = JSON.parse(text);
  } catch {
    return [diag('STREAM_PARSE_ERROR', `stdout line is not JSON: ${excerpt(text)}`)];
  }
  if (!isObject(event) || typeof event.type !== 'string')
    return [diag('STREAM_PARSE_ERROR', `stdout line is not ${what}: ${excerpt(text)}`)];
  return onEvent(event as Json & { type: string }, text);
}

/**
 * One line of any stream of a JSONL engine (opencode, copilot): a PTY line loses the terminal's echo first; stderr, and
 * a PTY line that is not a JSON object, give an ENGINE_STDERR diagnostic when `stderrError` matches (else nothing);
 * the rest is an event line ({@link parseEventLine}).
 */
export function readJsonlEngineLine(
  stream: StreamName,
  rawText: string,
  stderrError: RegExp,
  what: string,
  onEvent: (event: Json & { type: string }, text: string) => ParserOutput[],
): ParserOutput[] {
  const { text, noise } = stream === 'pty' ? stripPtyEcho(rawText) : { text: rawText, noise: null };
  if (stream === 'stderr' || (stream === 'pty' && !text.trimStart().startsWith('{')))
    return stderrError.test(text) ? [diag('ENGINE_STDERR', excerpt(text), 'info')] : [];
  return [...(noise ? [noise] : []), ...parseEventLine(text, what, onEvent)];
}

/** The exit code a tool output states (`Exit code 3`, `Exit Code: 3`, `exited with code 3`), or null. */
export function exitCodeFromText(text: string | null): number | null {
  if (!text) return null;
  const match =
    /(?:^|\n)\s*Exit code:?\s*(-?\d+)\b/i.exec(text) ?? /\bexited with (?:exit )?code\s*(-?\d+)\b/i.exec(text);
  return match ? Number(match[1]) : null;
}
