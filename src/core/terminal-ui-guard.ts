/**
 * The harness's bound on an engine that starts its full-screen terminal UI where there is no terminal. With split io
 * the engine's stdout and stderr are pipes: an engine that switches to the alternate screen (`ESC[?1049h`) or asks
 * for the cursor position (`ESC[6n`, which only a terminal answers) is running its interactive UI, because its
 * arguments did not select its headless mode (`agent-harness start opencode --prompt x` hands `--prompt` to opencode,
 * which then draws its UI into the pipe), and it would wait for keys until the attempt's timeout, silently. The
 * attempt is ended as soon as one is seen, with ENGINE_NEEDS_TERMINAL. A JSON stream never holds a raw ESC (JSON
 * escapes control characters), so a headless engine's events cannot look like one; the common chunk costs one byte
 * search.
 */
import { AgentHarnessError } from '../errors/index.js';
import type { StreamName } from '../protocol/index.js';

/** What only a full-screen terminal UI writes, with what it means (in the error). */
const TERMINAL_UI_SEQUENCES = [
  { bytes: Buffer.from('\u001b[?1049h'), what: 'switched to the alternate screen (ESC[?1049h)' },
  { bytes: Buffer.from('\u001b[6n'), what: 'asked the terminal for the cursor position (ESC[6n)' },
];

const ESC = 0x1b;

/** Bytes kept from a chunk's end, so that a sequence cut between two chunks is still seen. */
const KEEP = Math.max(...TERMINAL_UI_SEQUENCES.map((sequence) => sequence.bytes.length)) - 1;

/** A running guard: `signal` aborts when it fires; `error` then says why. */
export interface TerminalUiGuard {
  signal: AbortSignal;
  /** The attempt's error once the guard fired; null before (and when it never does). */
  readonly error: AgentHarnessError | null;
  /** Takes a chunk of the engine's output, as it arrives. */
  output(stream: StreamName, chunk: Uint8Array): void;
}

/** What a chunk of output shows: the first terminal UI sequence in it (with the end of the stream's last chunk). */
export function terminalUiSequence(chunk: Uint8Array, before: Uint8Array = new Uint8Array()): string | null {
  const buffer = Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
  // A sequence cut between two chunks starts with an ESC in the last one's end: only then are the two joined.
  const head = before.includes(ESC) ? Buffer.concat([before, buffer.subarray(0, KEEP)]) : null;
  if (buffer.indexOf(ESC) === -1 && head === null) return null;
  const found = TERMINAL_UI_SEQUENCES.find(({ bytes }) => buffer.includes(bytes) || head?.includes(bytes) === true);
  return found?.what ?? null;
}

/**
 * Arms the guard for an attempt of `engine` whose output goes to pipes; `onFound` is told the error before the engine
 * is ended (the attempt's diagnostic, ahead of its exit).
 */
export function startTerminalUiGuard(engine: string, onFound: (error: AgentHarnessError) => void): TerminalUiGuard {
  const controller = new AbortController();
  const tails = new Map<StreamName, Uint8Array>();
  let error: AgentHarnessError | null = null;
  return {
    signal: controller.signal,
    get error() {
      return error;
    },
    output(stream, chunk) {
      if (error) return;
      const what = terminalUiSequence(chunk, tails.get(stream));
      tails.set(stream, chunk.slice(Math.max(0, chunk.byteLength - KEEP)));
      if (!what) return;
      error = new AgentHarnessError(
        'ENGINE_NEEDS_TERMINAL',
        `${engine} started its terminal UI without a terminal: its ${stream} (a pipe) ${what}, so it would wait for keys until the timeout; the attempt was ended. Its arguments did not select its headless mode: agent-harness's own options go before the engine's name (\`agent-harness start --prompt "…" ${engine}\`), everything after it is passed to ${engine}. To use its UI, run it from a terminal with --translate 0.`,
        { details: { engine, stream } },
      );
      onFound(error);
      controller.abort(error);
    },
  };
}
