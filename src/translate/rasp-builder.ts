/**
 * Builds the RASP stream of one attempt: lifecycle events, one `raw.line` per raw line (with its byte range)
 * followed by what the engine parser made of that line (same `raw_ref`), and diagnostics. `seq` starts at 1
 * and strictly increases. A parser that throws (against its contract) becomes a diagnostic instead of a broken
 * event. Parser outputs are taken as they are: the built-in parsers' are proven protocol values by their property
 * tests, and the registry wraps the parser of an engine registered at run time in a check (checked-parser.ts).
 */
import { RASP_VERSION } from '../protocol/versions.js';
import type { Diagnostic, EngineId, RaspData, RaspEvent, RawRef, StreamName } from '../protocol/index.js';
import type { EngineParser, ParserOutput } from '../engines/engine.js';

/** Data of `lifecycle.started`, without its type tag. */
export type StartedData = Omit<Extract<RaspData, { type: 'lifecycle.started' }>, 'type'>;
/** Data of `lifecycle.exited`, without its type tag. */
export type ExitedData = Omit<Extract<RaspData, { type: 'lifecycle.exited' }>, 'type'>;

/** Options of {@link createRaspBuilder}. */
export interface RaspBuilderOptions {
  /** Run id written in every event. */
  runId: string;
  /** Attempt number (from 1). */
  attempt: number;
  /** Engine id. */
  engine: EngineId;
  /** A fresh parser for this attempt. */
  parser: EngineParser;
  /** Clock for `ts`; defaults to the wall clock. */
  now?: () => Date;
  /** Called with each event as soon as it is built (streaming views, audit writers). */
  onEvent?: (event: RaspEvent) => void;
  /**
   * Keep `raw.line` events in {@link RaspBuilder.events} (default true). False bounds what a long recording
   * keeps when only parsed events are needed (views and summary never show raw lines); `onEvent` still sees them.
   */
  keepRawLines?: boolean;
  /**
   * Keep no event at all in {@link RaspBuilder.events} (default false): for a consumer that takes every event from
   * `onEvent` (a streamed translation), so a recording of any length holds none.
   */
  keepNoEvents?: boolean;
  /**
   * Build `raw.line` events (default true). False skips them entirely, for `onEvent` too, while their seq numbers
   * stay taken, so the other events are numbered exactly as with them (a translation whose views never show raw lines).
   */
  rawLineEvents?: boolean;
}

/** A stateful RASP builder for one attempt. */
export interface RaspBuilder {
  /** Every event built so far, in seq order (without `raw.line` events when `keepRawLines` is false). */
  readonly events: readonly RaspEvent[];
  /** Records `lifecycle.started`. */
  started(data: StartedData): RaspEvent[];
  /** Records one raw line and the parser's outputs for it; returns the events built. */
  line(stream: StreamName, text: string, rawRef: RawRef | null): RaspEvent[];
  /** Flushes the parser (`end()`) and records `lifecycle.exited`; returns the events built. */
  exited(data: ExitedData): RaspEvent[];
  /** Records a harness diagnostic (PTY fallback, truncated log…). */
  diagnostic(diagnostic: Diagnostic, rawRef?: RawRef | null): RaspEvent[];
  /** Records events read from somewhere other than the output (an engine's session store), without raw refs. */
  recovered(outputs: Iterable<ParserOutput>): void;
}

/** Creates a {@link RaspBuilder}. */
export function createRaspBuilder(options: RaspBuilderOptions): RaspBuilder {
  const { runId, attempt, engine, parser, onEvent } = options;
  const timestamp = options.now ? () => options.now!().toISOString() : wallClockTimestamp();
  const events: RaspEvent[] = [];
  const keepEvents = !(options.keepNoEvents ?? false);
  const keepRawLines = keepEvents && (options.keepRawLines ?? true);
  const rawLineEvents = options.rawLineEvents ?? true;
  let seq = 0;

  function emit(data: RaspData, rawRef: RawRef | null): RaspEvent {
    const event: RaspEvent = {
      protocol_version: RASP_VERSION,
      run_id: runId,
      attempt,
      seq: ++seq,
      ts: timestamp(),
      engine,
      data,
      raw_ref: rawRef ? { stream: rawRef.stream, from: rawRef.from, to: rawRef.to } : null,
    };
    if (keepRawLines || (keepEvents && data.type !== 'raw.line')) events.push(event);
    onEvent?.(event);
    return event;
  }

  /** What the parser made of one line; a throw (against its contract) becomes a PARSER_THREW diagnostic. */
  function lineOutputs(stream: StreamName, text: string): ParserOutput[] {
    try {
      return parser.line(stream, text);
    } catch (error) {
      return [parserThrew(engine, error)];
    }
  }

  function endOutputs(): ParserOutput[] {
    try {
      return parser.end();
    } catch (error) {
      return [parserThrew(engine, error)];
    }
  }

  function emitOutputs(outputs: ParserOutput[], rawRef: RawRef | null, built: RaspEvent[] = []): RaspEvent[] {
    for (let i = 0; i < outputs.length; i += 1) built.push(emit(outputs[i]!, rawRef));
    return built;
  }

  return {
    events,
    started: (data) => [emit({ type: 'lifecycle.started', ...data }, null)],
    line(stream, text, rawRef) {
      if (!rawLineEvents) {
        seq += 1;
        return emitOutputs(lineOutputs(stream, text), rawRef);
      }
      const raw = emit({ type: 'raw.line', text }, rawRef);
      return emitOutputs(lineOutputs(stream, text), rawRef, [raw]);
    },
    exited(data) {
      const tail = emitOutputs(endOutputs(), null);
      tail.push(emit({ type: 'lifecycle.exited', ...data }, null));
      return tail;
    },
    diagnostic: ({ code, message, level }, rawRef = null) => [
      emit({ type: 'diagnostic', diagnostic: { code, message, level } }, rawRef),
    ],
    recovered(outputs) {
      for (const output of outputs) emit(output, null);
    },
  };
}

/** `new Date().toISOString()`, formatted once per millisecond (a long stream builds many events per ms). */
function wallClockTimestamp(): () => string {
  let lastMs = Number.NaN;
  let last = '';
  return () => {
    const ms = Date.now();
    if (ms !== lastMs) {
      lastMs = ms;
      last = new Date(ms).toISOString();
    }
    return last;
  };
}

function parserThrew(engine: EngineId, error: unknown): Extract<RaspData, { type: 'diagnostic' }> {
  return {
    type: 'diagnostic',
    diagnostic: { code: 'PARSER_THREW', message: `the ${engine} parser threw: ${String(error)}`, level: 'error' },
  };
}
