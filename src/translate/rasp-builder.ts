/**
 * Builds the RASP stream of one attempt: lifecycle events, one `raw.line` per raw line (with its byte range)
 * followed by what the engine parser made of that line (same `raw_ref`), and diagnostics. `seq` starts at 1
 * and strictly increases. Parser outputs are checked against the protocol schema; an output that does not
 * fit (or a parser that throws, against its contract) becomes a diagnostic instead of a broken event.
 */
import {
  DiagnosticSchema,
  ParsedEventSchema,
  RASP_VERSION,
  type Diagnostic,
  type EngineId,
  type RaspData,
  type RaspEvent,
  type RawRef,
  type StreamName,
} from '../protocol/index.js';
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
  recovered(outputs: readonly ParserOutput[]): RaspEvent[];
}

/** Creates a {@link RaspBuilder}. */
export function createRaspBuilder(options: RaspBuilderOptions): RaspBuilder {
  const { runId, attempt, engine, parser, onEvent } = options;
  const now = options.now ?? (() => new Date());
  const events: RaspEvent[] = [];
  const keepRawLines = options.keepRawLines ?? true;
  let seq = 0;

  function emit(data: RaspData, rawRef: RawRef | null): RaspEvent {
    const event: RaspEvent = {
      protocol_version: RASP_VERSION,
      run_id: runId,
      attempt,
      seq: ++seq,
      ts: now().toISOString(),
      engine,
      data,
      raw_ref: rawRef ? { ...rawRef } : null,
    };
    if (keepRawLines || data.type !== 'raw.line') events.push(event);
    onEvent?.(event);
    return event;
  }

  function emitOutputs(run: () => ParserOutput[], rawRef: RawRef | null): RaspEvent[] {
    let outputs: ParserOutput[];
    try {
      outputs = run();
    } catch (error) {
      outputs = [internalDiagnostic('PARSER_THREW', `the ${engine} parser threw: ${String(error)}`)];
    }
    return outputs.map((output) => emit(checkOutput(output, engine), rawRef));
  }

  return {
    events,
    started: (data) => [emit({ type: 'lifecycle.started', ...data }, null)],
    line(stream, text, rawRef) {
      const raw = emit({ type: 'raw.line', text }, rawRef);
      return [raw, ...emitOutputs(() => parser.line(stream, text), rawRef)];
    },
    exited(data) {
      const tail = emitOutputs(() => parser.end(), null);
      return [...tail, emit({ type: 'lifecycle.exited', ...data }, null)];
    },
    diagnostic: (diagnostic, rawRef = null) => [emit(checkOutput({ type: 'diagnostic', diagnostic }, engine), rawRef)],
    recovered: (outputs) => outputs.map((output) => emit(checkOutput(output, engine), null)),
  };
}

function checkOutput(output: ParserOutput, engine: EngineId): RaspData {
  if (output.type === 'diagnostic') {
    const parsed = DiagnosticSchema.safeParse(output.diagnostic);
    if (parsed.success) return { type: 'diagnostic', diagnostic: parsed.data };
  } else {
    const parsed = ParsedEventSchema.safeParse(output);
    if (parsed.success) return parsed.data;
  }
  return internalDiagnostic('PARSER_OUTPUT_INVALID', `the ${engine} parser produced an invalid event: ${JSON.stringify(output).slice(0, 200)}`);
}

function internalDiagnostic(code: string, message: string): Extract<RaspData, { type: 'diagnostic' }> {
  return { type: 'diagnostic', diagnostic: { code, message, level: 'error' } };
}
