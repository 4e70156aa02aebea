/**
 * Splits raw output chunks into lines with byte offsets, per stream. Splitting happens on bytes (`\n` is
 * never part of a multibyte UTF-8 sequence) and each line is decoded on its own, so a character cut between
 * two chunks is decoded whole. Offsets index the audit log of that stream (`stdout.N.log`…).
 * A line longer than `maxLineBytes` is not buffered: its bytes are counted and dropped, and it comes out as an
 * empty line marked `overlong` (a diagnostic for the feeder), so a stream without newlines cannot grow memory.
 */
import type { StreamName } from '../protocol/index.js';

/** One complete line of a stream. */
export interface SplitLine {
  /** The stream it came from. */
  stream: StreamName;
  /** The decoded line without `\n` and without a trailing `\r`. */
  text: string;
  /** Byte offset of the first byte of the line. */
  from: number;
  /** Byte offset just past the line terminator (or past the last byte for an unterminated line). */
  to: number;
  /** Set when the line was longer than the splitter's `maxLineBytes`: `text` is empty, its bytes were dropped. */
  overlong?: true;
}

/** Default longest line kept (16 MiB); a longer line becomes an `overlong` marker. */
export const DEFAULT_MAX_LINE_BYTES = 16 * 1024 * 1024;

/** Options of {@link createLineSplitter}. */
export interface LineSplitterOptions {
  /** Longest line kept, in bytes without the terminator; default {@link DEFAULT_MAX_LINE_BYTES}. */
  maxLineBytes?: number;
}

/** A stateful line splitter for the streams of one attempt. */
export interface LineSplitter {
  /**
   * Feeds one chunk of `stream` and returns the lines it completed. `from` is the byte offset of the chunk in
   * its stream; omitted, the chunk is taken to follow the previous one. A gap (a `from` past the expected
   * offset) ends the pending partial line where it stopped.
   */
  push(stream: StreamName, chunk: Uint8Array, from?: number): SplitLine[];
  /** {@link LineSplitter.push} handing each completed line to `onLine` as it is found (no array of the chunk's lines). */
  pushEach(stream: StreamName, chunk: Uint8Array, onLine: (line: SplitLine) => void, from?: number): void;
  /** Returns the unterminated last line of `stream` (or of every stream), if any, and clears it. */
  flush(stream?: StreamName): SplitLine[];
}

interface StreamState {
  pending: Buffer[];
  /** Bytes held in `pending`, or counted past the limit when `overlong`. */
  pendingBytes: number;
  pendingFrom: number;
  next: number;
  /** The pending line passed the limit: its bytes are being dropped up to the next newline. */
  overlong: boolean;
}

const NEWLINE = 0x0a;
const CR = 0x0d;

/** Creates a {@link LineSplitter}. */
export function createLineSplitter(options: LineSplitterOptions = {}): LineSplitter {
  const maxLineBytes = options.maxLineBytes ?? DEFAULT_MAX_LINE_BYTES;
  const states = new Map<StreamName, StreamState>();

  function stateOf(stream: StreamName): StreamState {
    let state = states.get(stream);
    if (!state) {
      state = { pending: [], pendingBytes: 0, pendingFrom: 0, next: 0, overlong: false };
      states.set(stream, state);
    }
    return state;
  }

  function hasPending(state: StreamState): boolean {
    return state.pending.length > 0 || state.overlong;
  }

  function clearPending(state: StreamState): void {
    state.pending = [];
    state.pendingBytes = 0;
    state.overlong = false;
  }

  /** The pending line ended by `tail` (bytes of this chunk, not yet counted) at offset `to`. */
  function endPending(stream: StreamName, state: StreamState, tail: Buffer, to: number): SplitLine {
    const from = state.pendingFrom;
    const overlong = state.overlong || state.pendingBytes + tail.length > maxLineBytes;
    const line: SplitLine = overlong
      ? { stream, text: '', from, to, overlong: true }
      : {
          stream,
          text: decode(stripCr(state.pending.length > 0 ? Buffer.concat([...state.pending, tail]) : tail)),
          from,
          to,
        };
    clearPending(state);
    return line;
  }

  function takePending(stream: StreamName, state: StreamState): SplitLine[] {
    if (!hasPending(state)) return [];
    return [endPending(stream, state, Buffer.alloc(0), state.pendingFrom + state.pendingBytes)];
  }

  /** Keeps an unterminated tail, or only counts it once the line is past the limit. */
  function holdTail(state: StreamState, tail: Buffer, at: number): void {
    if (!hasPending(state)) state.pendingFrom = at;
    state.pendingBytes += tail.length;
    if (state.overlong) return;
    if (state.pendingBytes > maxLineBytes) {
      state.pending = [];
      state.overlong = true;
      return;
    }
    // Copy: the caller may reuse its buffer.
    state.pending.push(Buffer.from(tail));
  }

  function pushEach(stream: StreamName, chunk: Uint8Array, onLine: (line: SplitLine) => void, from?: number): void {
    const state = stateOf(stream);
    if (from !== undefined && from !== state.next) {
      for (const line of takePending(stream, state)) onLine(line);
      state.next = from;
    }
    const buf = Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    const base = state.next;
    // Advanced first: `onLine` may see the state (and must not push to it).
    state.next += buf.length;
    let start = 0;
    for (let nl = buf.indexOf(NEWLINE); nl !== -1; nl = buf.indexOf(NEWLINE, start)) {
      if (!hasPending(state)) {
        // The common case, a whole line inside the chunk: decoded in place, no copy.
        if (nl - start <= maxLineBytes) {
          const end = nl > start && buf[nl - 1] === CR ? nl - 1 : nl;
          const line: SplitLine = {
            stream,
            text: buf.toString('utf8', start, end),
            from: base + start,
            to: base + nl + 1,
          };
          start = nl + 1;
          onLine(line);
          continue;
        }
        state.pendingFrom = base + start;
      }
      const line = endPending(stream, state, buf.subarray(start, nl), base + nl + 1);
      start = nl + 1;
      onLine(line);
    }
    if (start < buf.length) holdTail(state, buf.subarray(start), base + start);
  }

  return {
    push(stream, chunk, from) {
      const lines: SplitLine[] = [];
      pushEach(stream, chunk, (line) => lines.push(line), from);
      return lines;
    },
    pushEach,
    flush(stream) {
      const names = stream ? [stream] : [...states.keys()];
      return names.flatMap((name) => {
        const state = states.get(name);
        if (!state) return [];
        return takePending(name, state);
      });
    },
  };
}

function stripCr(bytes: Buffer): Buffer {
  return bytes.length > 0 && bytes[bytes.length - 1] === CR ? bytes.subarray(0, bytes.length - 1) : bytes;
}

function decode(bytes: Buffer): string {
  return bytes.toString('utf8');
}
