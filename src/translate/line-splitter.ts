/**
 * Splits raw output chunks into lines with byte offsets, per stream. Splitting happens on bytes (`\n` is
 * never part of a multibyte UTF-8 sequence) and each line is decoded on its own, so a character cut between
 * two chunks is decoded whole. Offsets index the audit log of that stream (`stdout.N.log`…).
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
}

/** A stateful line splitter for the streams of one attempt. */
export interface LineSplitter {
  /**
   * Feeds one chunk of `stream` and returns the lines it completed. `from` is the byte offset of the chunk in
   * its stream; omitted, the chunk is taken to follow the previous one. A gap (a `from` past the expected
   * offset) ends the pending partial line where it stopped.
   */
  push(stream: StreamName, chunk: Uint8Array, from?: number): SplitLine[];
  /** Returns the unterminated last line of `stream` (or of every stream), if any, and clears it. */
  flush(stream?: StreamName): SplitLine[];
}

interface StreamState {
  pending: Buffer[];
  pendingFrom: number;
  next: number;
}

const NEWLINE = 0x0a;
const CR = 0x0d;

/** Creates a {@link LineSplitter}. */
export function createLineSplitter(): LineSplitter {
  const states = new Map<StreamName, StreamState>();

  function stateOf(stream: StreamName): StreamState {
    let state = states.get(stream);
    if (!state) {
      state = { pending: [], pendingFrom: 0, next: 0 };
      states.set(stream, state);
    }
    return state;
  }

  function takePending(stream: StreamName, state: StreamState): SplitLine[] {
    if (state.pending.length === 0) return [];
    const bytes = Buffer.concat(state.pending);
    state.pending = [];
    return [{ stream, text: decode(stripCr(bytes)), from: state.pendingFrom, to: state.pendingFrom + bytes.length }];
  }

  return {
    push(stream, chunk, from) {
      const state = stateOf(stream);
      const lines: SplitLine[] = [];
      if (from !== undefined && from !== state.next) {
        lines.push(...takePending(stream, state));
        state.next = from;
      }
      const buf = Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
      let start = 0;
      for (let nl = buf.indexOf(NEWLINE); nl !== -1; nl = buf.indexOf(NEWLINE, start)) {
        const head = buf.subarray(start, nl);
        const lineFrom = state.pending.length > 0 ? state.pendingFrom : state.next + start;
        const bytes = state.pending.length > 0 ? Buffer.concat([...state.pending, head]) : head;
        state.pending = [];
        lines.push({ stream, text: decode(stripCr(bytes)), from: lineFrom, to: state.next + nl + 1 });
        start = nl + 1;
      }
      if (start < buf.length) {
        if (state.pending.length === 0) state.pendingFrom = state.next + start;
        // Copy: the caller may reuse its buffer.
        state.pending.push(Buffer.from(buf.subarray(start)));
      }
      state.next += buf.length;
      return lines;
    },
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
