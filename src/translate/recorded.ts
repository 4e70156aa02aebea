/**
 * Translation of recorded output (audit logs or captures from elsewhere) through the same parsers as a live
 * attempt. Stream priority: the split streams (stdout, then stderr); the PTY capture only when they give no
 * structured engine event (`PTY_FALLBACK_USED`), so a payload present in both is consumed once. This is the
 * in-memory form (bytes in, event arrays out); `recorded-stream.ts` translates files of any size as they are read.
 */
import { withMcpReadiness } from '../engines/mcp-readiness.js';
import type { EngineAdapter } from '../engines/engine.js';
import type { Diagnostic, FcmpEvent, RaspEvent, StreamName } from '../protocol/index.js';
import { judgeCompletion, type CompletionJudgement } from './completion.js';
import { countToolCalls, collectDiagnostics } from './conformance.js';
import { translateRaspToFcmp, type FcmpTranslateOptions } from './fcmp.js';
import { feedLine } from './feed.js';
import { createLineSplitter, type SplitLine } from './line-splitter.js';
import { createRaspBuilder, type ExitedData, type RaspBuilder, type RaspBuilderOptions } from './rasp-builder.js';

/** Raw captures to translate; any subset. */
export interface RecordedOutput {
  stdout?: Uint8Array;
  stderr?: Uint8Array;
  pty?: Uint8Array;
}

/** Options of {@link translateRecorded}. */
export interface TranslateRecordedOptions {
  runId?: string;
  attempt?: number;
  launch?: 'start' | 'resume';
  /** The recorded exit, when known (a run's meta); otherwise the stream is judged as having ended. */
  exit?: ExitedData | null;
  /** FCMP seq of the previous attempt (run selector form). */
  seqStart?: number;
  sessionId?: string | null;
  /** Keep `raw.line` events in `rasp` (default true); false when only views or the summary are wanted. */
  keepRawLines?: boolean;
  /**
   * The streamed translation (`translateRecordedStreams`) sends `raw.line` events to its sink too (default false:
   * views and the summary do not show them), as an attempt's `rasp.N.jsonl` holds them.
   */
  rawLineEvents?: boolean;
}

/** The `--summary` object (exactly these keys). */
export interface TranslationSummary {
  engine: string;
  session_id: string | null;
  final_message: string | null;
  tool_calls: number;
  completed: boolean;
  error: string | null;
  diagnostics: Array<{ code: string; message: string }>;
}

/** A translated recording. */
export interface RecordedTranslation {
  rasp: RaspEvent[];
  fcmp: FcmpEvent[];
  judgement: CompletionJudgement;
  summary: TranslationSummary;
}

/** What a recorded translation needs of an engine adapter. */
export type RecordedAdapter = Pick<EngineAdapter, 'id' | 'createParser' | 'errorPatterns' | 'turnScopedIds'>;
type Adapter = RecordedAdapter;

const UTF8_BOM = Buffer.from([0xef, 0xbb, 0xbf]);

/** `bytes` without a leading UTF-8 BOM (the first chunk of a recorded stream). */
export function withoutBom(bytes: Uint8Array): Uint8Array {
  return bytes.length >= 3 && bytes[0] === UTF8_BOM[0] && bytes[1] === UTF8_BOM[1] && bytes[2] === UTF8_BOM[2]
    ? bytes.subarray(3)
    : bytes;
}

/** The parse of recorded streams, chunk by chunk, shared by the in-memory and the streamed translation. */
export interface StreamsParse {
  builder: RaspBuilder;
  /** Feeds the next chunk of `stream` (chunks of one stream in order, streams one after another). */
  push(stream: StreamName, chunk: Uint8Array): void;
  /** Ends `stream`: its unterminated last line is parsed. */
  end(stream: StreamName): void;
  /** Records the exit (the parser's tail first). */
  finish(): void;
}

/**
 * Starts parsing recorded streams through one splitter and one RASP builder (`builder` options beyond the run's:
 * what it keeps, and where its events go). A leading BOM of each stream is dropped; offsets count from after it.
 */
export function startStreamsParse(
  adapter: Adapter,
  options: TranslateRecordedOptions,
  builder: Pick<RaspBuilderOptions, 'keepRawLines' | 'keepNoEvents' | 'rawLineEvents' | 'onEvent'> = {},
): StreamsParse {
  const rasp = createRaspBuilder({
    runId: options.runId ?? 'recorded',
    attempt: options.attempt ?? 1,
    engine: adapter.id,
    parser: withMcpReadiness(adapter.createParser()),
    ...builder,
  });
  const splitter = createLineSplitter();
  const feed = (line: SplitLine): void => feedLine(rasp, line);
  const started = new Set<StreamName>();
  return {
    builder: rasp,
    push(stream, chunk) {
      if (started.has(stream)) splitter.pushEach(stream, chunk, feed);
      else {
        started.add(stream);
        splitter.pushEach(stream, withoutBom(chunk), feed, 0);
      }
    },
    end(stream) {
      for (const line of splitter.flush(stream)) feed(line);
    },
    finish() {
      rasp.exited(options.exit ?? { exit_code: null, signal: null, timed_out: false, canceled: false, duration_ms: 0 });
    },
  };
}

function parseStreams(
  adapter: Adapter,
  output: RecordedOutput,
  streams: StreamName[],
  options: TranslateRecordedOptions,
  fallback: boolean,
  carried: readonly Diagnostic[] = [],
): RaspEvent[] {
  const parse = startStreamsParse(adapter, options, { keepRawLines: options.keepRawLines ?? true });
  const { builder } = parse;
  builder.started({
    launch: options.launch ?? 'start',
    argv: [],
    cwd: '',
    pid: null,
    io: streams.includes('pty') ? 'pty' : 'split',
  });
  if (fallback)
    builder.diagnostic({
      code: 'PTY_FALLBACK_USED',
      message: 'the split streams held no structured engine event; the PTY capture was parsed instead',
      level: 'warning',
    });
  // The split streams' doubts (noise, stderr errors) still describe the attempt when the PTY is parsed instead.
  for (const diagnostic of carried) builder.diagnostic(diagnostic);
  for (const stream of streams) {
    const bytes = output[stream];
    if (!bytes) continue;
    parse.push(stream, bytes);
    parse.end(stream);
  }
  parse.finish();
  return [...builder.events];
}

function hasEngineEvents(rasp: readonly RaspEvent[]): boolean {
  return rasp.some(({ data }) => data.type.startsWith('engine.'));
}

/** Translates recorded output. Never throws on bad content: doubtful parses are diagnostics. */
export function translateRecorded(
  adapter: Adapter,
  output: RecordedOutput,
  options: TranslateRecordedOptions = {},
): RecordedTranslation {
  const split: StreamName[] = (['stdout', 'stderr'] as const).filter((s) => output[s] !== undefined);
  let rasp = parseStreams(adapter, output, split, options, false);
  if (!hasEngineEvents(rasp) && output.pty !== undefined)
    rasp = parseStreams(adapter, output, ['pty'], options, split.length > 0, collectDiagnostics(rasp));
  return finishTranslation(adapter, rasp, options);
}

/** The FCMP translation options of a recording (its run, attempt, launch and session as far as they are known). */
export function recordedFcmpOptions(adapter: Adapter, options: TranslateRecordedOptions): FcmpTranslateOptions {
  return {
    runId: options.runId ?? 'recorded',
    engine: adapter.id,
    attempt: options.attempt ?? 1,
    seqStart: options.seqStart ?? 0,
    launch: options.launch ?? 'start',
    errorPatterns: adapter.errorPatterns,
    sessionId: options.sessionId ?? null,
    turnScopedIds: adapter.turnScopedIds ?? false,
  };
}

function finishTranslation(
  adapter: Adapter,
  rasp: RaspEvent[],
  options: TranslateRecordedOptions,
): RecordedTranslation {
  const judgement = judgeCompletion(rasp, { errorPatterns: adapter.errorPatterns });
  const fcmp = translateRaspToFcmp(rasp, recordedFcmpOptions(adapter, options));
  let session: string | null = options.sessionId ?? null;
  for (const { data } of rasp) if (data.type === 'engine.session') session = data.session_id;
  const finals = fcmp.filter((e) => e.type === 'assistant.message.final');
  const failed = judgement.state === 'failed' || judgement.state === 'interrupted';
  return {
    rasp,
    fcmp,
    judgement,
    summary: {
      engine: adapter.id,
      session_id: session,
      final_message: finals.length > 0 ? (finals.at(-1)!.data as { text: string }).text : null,
      tool_calls: countToolCalls(rasp),
      completed: judgement.state === 'completed' || judgement.state === 'awaiting_input',
      error: failed ? (judgement.failure?.message ?? judgement.reason) : null,
      diagnostics: collectDiagnostics(rasp).map(({ code, message }) => ({ code, message })),
    },
  };
}
