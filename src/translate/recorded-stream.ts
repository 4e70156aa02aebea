/**
 * Streamed translation of recorded output (the `translate` command): each stream is read chunk by chunk, every
 * line goes through splitter → parser → RASP → FCMP at once, and the events go to a sink as they are produced.
 * Nothing grows with the recording but what identifies it (the ids of tool calls and finalized messages) and the
 * first {@link MAX_SUMMARY_DIAGNOSTICS} diagnostics: the summary is built from counters, not event arrays.
 *
 * Stream priority is that of {@link translateRecorded}: the split streams (stdout, then stderr); the PTY capture
 * only when they give no structured engine event (`PTY_FALLBACK_USED`). When a PTY capture is given, the split
 * streams are pre-scanned first (read until their first engine event, usually the first line) instead of being
 * held; on fallback they are read once more for the diagnostics the PTY translation carries.
 */
import type { Diagnostic, FcmpEvent, RaspEvent, StreamName } from '../protocol/index.js';
import type { CompletionJudgement } from './completion.js';
import { createFcmpTranslator } from './fcmp.js';
import {
  recordedFcmpOptions,
  startStreamsParse,
  type RecordedAdapter,
  type StreamsParse,
  type TranslateRecordedOptions,
  type TranslationSummary,
} from './recorded.js';

/**
 * Chunks of one recorded stream, read when needed (a stream may be read more than once: each call starts over). The
 * translation is done with a chunk before it asks for the next, so a source may reuse its buffers.
 */
export type RecordedSource = () => AsyncIterable<Uint8Array>;

/** Recorded streams to translate chunk by chunk (files streamed from disk); any subset. */
export type RecordedSources = Partial<Record<'stdout' | 'stderr' | 'pty', RecordedSource>>;

/** Where a streamed translation sends its events, in order, as soon as they are built. */
export interface TranslationSink {
  /** Each RASP event; `raw.line` events only with the `rawLineEvents` option (else none is built, their seqs stay taken). */
  rasp?(event: RaspEvent): void;
  /** Each FCMP event. */
  fcmp?(event: FcmpEvent): void;
  /** Awaited after each input chunk: a slow output holds the reading back (backpressure). */
  drain?(): Promise<void> | void;
}

/** What a streamed translation returns besides what it sent to the sink. */
export interface StreamedTranslation {
  judgement: CompletionJudgement;
  summary: TranslationSummary;
}

/** Diagnostics listed in a streamed translation's summary; past it they are counted and one more entry says so. */
export const MAX_SUMMARY_DIAGNOSTICS = 1000;

/** Code of the summary entry that says how many diagnostics were not listed. */
export const SUMMARY_DIAGNOSTICS_TRUNCATED = 'SUMMARY_DIAGNOSTICS_TRUNCATED';

/**
 * Reads `streams` of `sources` through `parse`, each to its end unless `stop()` turns true between chunks; `drain`
 * is awaited after each chunk (the output's backpressure).
 */
async function readSources(
  parse: StreamsParse,
  sources: RecordedSources,
  streams: readonly StreamName[],
  stop: () => boolean = () => false,
  drain?: () => Promise<void> | void,
): Promise<void> {
  for (const stream of streams) {
    const source = sources[stream];
    if (!source) continue;
    for await (const chunk of source()) {
      parse.push(stream, chunk);
      if (stop()) return;
      const waiting = drain?.();
      if (waiting) await waiting;
    }
    parse.end(stream);
    if (stop()) return;
  }
}

/** A parse that keeps no events: they go to `onEvent` only, `raw.line` events only when `rawLineEvents`. */
function startParse(
  adapter: RecordedAdapter,
  options: TranslateRecordedOptions,
  onEvent: (event: RaspEvent) => void,
  rawLineEvents = false,
): StreamsParse {
  return startStreamsParse(adapter, options, { keepNoEvents: true, rawLineEvents, onEvent });
}

/** True when the split streams give an engine event; reads only up to the first one. */
async function splitHasEngineEvents(
  adapter: RecordedAdapter,
  sources: RecordedSources,
  split: readonly StreamName[],
  options: TranslateRecordedOptions,
): Promise<boolean> {
  let found = false;
  const scan = startParse(adapter, options, (event) => {
    if (event.data.type.startsWith('engine.')) found = true;
  });
  await readSources(scan, sources, split, () => found);
  if (!found) scan.finish();
  return found;
}

/** Counts what the summary needs while the events go by. */
function createSummaryCounter(options: TranslateRecordedOptions) {
  let session: string | null = options.sessionId ?? null;
  let finalMessage: string | null = null;
  const diagnostics: Array<{ code: string; message: string }> = [];
  let unlisted = 0;
  return {
    rasp(event: RaspEvent): void {
      const data = event.data;
      if (data.type === 'engine.session') session = data.session_id;
      else if (data.type === 'diagnostic') {
        if (diagnostics.length < MAX_SUMMARY_DIAGNOSTICS)
          diagnostics.push({ code: data.diagnostic.code, message: data.diagnostic.message });
        else unlisted += 1;
      }
    },
    fcmp(event: FcmpEvent): void {
      if (event.type === 'assistant.message.final') finalMessage = event.data.text;
    },
    summary(engine: string, judgement: CompletionJudgement, toolCalls: number): TranslationSummary {
      const failed = judgement.state === 'failed' || judgement.state === 'interrupted';
      const listed =
        unlisted === 0
          ? diagnostics
          : [
              ...diagnostics,
              {
                code: SUMMARY_DIAGNOSTICS_TRUNCATED,
                message: `${unlisted} more diagnostics are not listed here (the first ${MAX_SUMMARY_DIAGNOSTICS} are); view 1 or 2 shows them all`,
              },
            ];
      return {
        engine,
        session_id: session,
        final_message: finalMessage,
        tool_calls: toolCalls,
        completed: judgement.state === 'completed' || judgement.state === 'awaiting_input',
        error: failed ? (judgement.failure?.message ?? judgement.reason) : null,
        diagnostics: listed,
      };
    },
  };
}

/**
 * Translates recorded streams as they are read, sending RASP (without raw lines) and FCMP events to `sink`; returns
 * the verdict and the summary. The events are those {@link translateRecorded} gives for the same bytes; the summary
 * lists at most {@link MAX_SUMMARY_DIAGNOSTICS} diagnostics. Errors of a source (a read failing, an abort) reject.
 */
export async function translateRecordedStreams(
  adapter: RecordedAdapter,
  sources: RecordedSources,
  options: TranslateRecordedOptions = {},
  sink: TranslationSink = {},
): Promise<StreamedTranslation> {
  const split: StreamName[] = (['stdout', 'stderr'] as const).filter((s) => sources[s] !== undefined);
  const fallback = sources.pty !== undefined && !(await splitHasEngineEvents(adapter, sources, split, options));
  const translator = createFcmpTranslator(recordedFcmpOptions(adapter, options));
  const counter = createSummaryCounter(options);
  const toFcmp = (events: readonly FcmpEvent[]): void => {
    for (const event of events) {
      counter.fcmp(event);
      sink.fcmp?.(event);
    }
  };
  const parse = startParse(
    adapter,
    options,
    (event) => {
      counter.rasp(event);
      sink.rasp?.(event);
      toFcmp(translator.push(event));
    },
    options.rawLineEvents ?? false,
  );
  const { builder } = parse;
  builder.started({ launch: options.launch ?? 'start', argv: [], cwd: '', pid: null, io: fallback ? 'pty' : 'split' });
  if (fallback) {
    if (split.length > 0)
      builder.diagnostic({
        code: 'PTY_FALLBACK_USED',
        message: 'the split streams held no structured engine event; the PTY capture was parsed instead',
        level: 'warning',
      });
    // The split streams' doubts (noise, stderr errors) still describe the attempt when the PTY is parsed instead.
    const carried = startParse(adapter, options, (event) => {
      if (event.data.type === 'diagnostic') builder.diagnostic(event.data.diagnostic as Diagnostic);
    });
    await readSources(carried, sources, split, undefined, sink.drain);
    carried.finish();
  }
  await readSources(parse, sources, fallback ? ['pty'] : split, undefined, sink.drain);
  parse.finish();
  toFcmp(translator.finish());
  const judgement = translator.verdict();
  return { judgement, summary: counter.summary(adapter.id, judgement, translator.toolCalls) };
}
