/**
 * The completion judge: decides from an attempt's RASP events whether the agent finished, waits for input,
 * failed or was interrupted. Engines can exit 0 on an empty or failed turn (codex does), so the exit code is
 * never the evidence; the events are.
 */
import type { FailureCategory, RaspData, RaspEvent } from '../protocol/index.js';
import type { ErrorPattern } from '../engines/engine.js';
import { MCP_SERVER_NOT_READY, mcpNotReadyServer } from '../engines/mcp-readiness.js';
import { categoryOfCode, type ErrorCode } from '../errors/codes.js';

/**
 * The diagnostics of the harness's guards that end an engine (the MCP startup watchdog, the terminal UI guard), with the
 * verdict's reason: the attempt's failure once the engine exited, whatever its stream says (its category is the
 * code's, errors/codes.ts).
 */
const GUARD_ENDINGS: Readonly<Partial<Record<ErrorCode, string>>> = {
  MCP_SERVER_STARTUP_STALLED: 'mcp_server_startup_stalled',
  ENGINE_NEEDS_TERMINAL: 'needs_terminal',
};

/** The diagnostic code of an engine the harness could not start (core/observe-attempt.ts). */
const ENGINE_SPAWN_FAILED = 'ENGINE_SPAWN_FAILED';

import { DONE_MARKER } from '../protocol/versions.js';

export { DONE_MARKER };

/** `{"__skill_done__": true}` inside any JSON object, fenced or not, with any spacing. */
const DONE_JSON = /"__skill_done__"\s*:\s*true\b/;

/** The done marker out of a whole text (src/translate/done-marker.ts, used by every user-facing text). */
export { stripDoneMarker } from './done-marker.js';

/** True when `text` carries the done marker: the token, or a JSON object with `"__skill_done__": true`. */
export function hasDoneMarker(text: string): boolean {
  return text.includes(DONE_MARKER) || DONE_JSON.test(text);
}

/** Why an attempt failed. */
export interface CompletionFailure {
  /** Failure category for `conversation.failed`. */
  category: FailureCategory;
  /** Stable code for `conversation.failed`. */
  code: string;
  /** The engine's message, or what the harness observed. */
  message: string;
}

/** The judge's verdict on one attempt. */
export interface CompletionJudgement {
  /** Completion state, as stored in the audit meta. */
  state: 'completed' | 'awaiting_input' | 'failed' | 'interrupted' | 'no_session' | 'unknown';
  /** Stable reason (`done_marker`, `turn_end_without_done_marker`, `turn_failed`…). */
  reason: string;
  /** Set when state is `failed` or `interrupted`. */
  failure?: CompletionFailure;
  /** seq of the RASP event that decided the verdict, or null. */
  evidenceSeq: number | null;
}

/** Options of {@link judgeCompletion}. */
export interface JudgeCompletionOptions {
  /** The engine's error-pattern table, used to categorize failures. */
  errorPatterns: readonly ErrorPattern[];
  /**
   * False for a call whose argv the user wrote (`agent-harness codex --version`): such a call may legitimately
   * start no session, and one that exits 0 without any engine event is `no_session`, not a failure. Default true:
   * the harness asked for a session, so none is a failure.
   */
  expectSession?: boolean;
  /**
   * The MCP servers whose tools the model script calls: an attempt in which the engine reported one of them not
   * ready (an `MCP_SERVER_NOT_READY` diagnostic) is failed, whatever the turn did without it.
   */
  mcpServersUsed?: readonly string[];
}

/** Parsed engine events: the evidence that a session started at all. */
const ENGINE_EVENT_TYPES = new Set<string>([
  'engine.session',
  'engine.assistant.message',
  'engine.reasoning',
  'engine.tool.call',
  'engine.tool.result',
  'engine.file.change',
  'engine.usage',
  'engine.turn.started',
  'engine.turn.end',
  'engine.error',
]);

/** Returns the first pattern row matching `message`, or null. */
export function matchErrorPattern(message: string, patterns: readonly ErrorPattern[]): ErrorPattern | null {
  return patterns.find((row) => row.pattern.test(message)) ?? null;
}

/** What {@link CompletionJudge.verdict} needs of an event: its seq (and, for the FCMP terminal event, its raw_ref). */
type Remembered = Pick<RaspEvent, 'seq' | 'raw_ref'>;

/**
 * An incremental completion judge: {@link CompletionJudge.observe} each RASP event of an attempt in order, then
 * {@link CompletionJudge.verdict}. It keeps only what a verdict can depend on (the last exit and turn end, the
 * first fatal error and done marker, the last error message and the pattern row of the latest one that matches),
 * so judging a long stream holds no events.
 */
export interface CompletionJudge {
  /** Observes the next event. */
  observe(event: RaspEvent): void;
  /** The verdict on the events observed so far (the same as {@link judgeCompletion} on them). */
  verdict(): CompletionJudgement;
  /** raw_ref of a remembered evidence event with this seq (exit, turn end, fatal error, done marker), else null. */
  rawRefOf(seq: number | null): RaspEvent['raw_ref'];
}

/** Creates a {@link CompletionJudge}. */
export function createCompletionJudge(options: JudgeCompletionOptions): CompletionJudge {
  let exit: (Remembered & { data: Extract<RaspData, { type: 'lifecycle.exited' }> }) | undefined;
  let turnEnd: (Remembered & { data: Extract<RaspData, { type: 'engine.turn.end' }> }) | undefined;
  let fatal: (Remembered & { message: string }) | undefined;
  let marker: Remembered | undefined;
  let engineEvents = false;
  let lastError: string | null = null;
  /** The pattern row of the latest error message that matches one (the fallback of `classify`). */
  let latestRow: ErrorPattern | null = null;
  /** The first MCP server the script uses that the engine reported not ready. */
  let notReady: (Remembered & { message: string }) | undefined;
  /** A guard of the harness ended the engine ({@link GUARD_ENDINGS}). */
  let guardEnded: (Remembered & { message: string; code: string }) | undefined;
  /** The engine could not be started (spawn failed: argv too long, no such executable, no permission). */
  let spawnFailed: (Remembered & { message: string }) | undefined;

  const errorMessage = (message: string): void => {
    lastError = message;
    const row = matchErrorPattern(message, options.errorPatterns);
    if (row) latestRow = row;
  };

  return {
    observe(event) {
      const data = event.data;
      if (!engineEvents && ENGINE_EVENT_TYPES.has(data.type)) engineEvents = true;
      switch (data.type) {
        case 'lifecycle.exited':
          exit = { seq: event.seq, raw_ref: event.raw_ref, data };
          break;
        case 'engine.turn.end':
          turnEnd = { seq: event.seq, raw_ref: event.raw_ref, data };
          break;
        case 'engine.error':
          if (data.fatal && !fatal) fatal = { seq: event.seq, raw_ref: event.raw_ref, message: data.message };
          errorMessage(data.message);
          break;
        case 'diagnostic':
          if (data.diagnostic.code === 'ENGINE_STDERR') errorMessage(data.diagnostic.message);
          if (!spawnFailed && data.diagnostic.code === ENGINE_SPAWN_FAILED)
            spawnFailed = { seq: event.seq, raw_ref: event.raw_ref, message: data.diagnostic.message };
          if (!guardEnded && Object.hasOwn(GUARD_ENDINGS, data.diagnostic.code))
            guardEnded = {
              seq: event.seq,
              raw_ref: event.raw_ref,
              message: data.diagnostic.message,
              code: data.diagnostic.code,
            };
          if (!notReady && options.mcpServersUsed?.includes(mcpNotReadyServer(data.diagnostic) ?? ''))
            notReady = { seq: event.seq, raw_ref: event.raw_ref, message: data.diagnostic.message };
          break;
        case 'engine.assistant.message':
          if (!marker && data.final && hasDoneMarker(data.text)) marker = { seq: event.seq, raw_ref: event.raw_ref };
          break;
        default:
          break;
      }
    },
    verdict() {
      return decide(
        { exit, turnEnd, fatal, marker, engineEvents, lastError, latestRow, notReady, guardEnded, spawnFailed },
        options,
      );
    },
    rawRefOf(seq) {
      if (seq === null) return null;
      // In the order judgeCompletion's `find` would meet them when seqs repeat (they do not in a built stream).
      for (const candidate of [exit, turnEnd, fatal, marker, notReady, guardEnded, spawnFailed])
        if (candidate && candidate.seq === seq) return candidate.raw_ref;
      return null;
    },
  };
}

interface Observed {
  exit: (Remembered & { data: Extract<RaspData, { type: 'lifecycle.exited' }> }) | undefined;
  turnEnd: (Remembered & { data: Extract<RaspData, { type: 'engine.turn.end' }> }) | undefined;
  fatal: (Remembered & { message: string }) | undefined;
  marker: Remembered | undefined;
  engineEvents: boolean;
  lastError: string | null;
  latestRow: ErrorPattern | null;
  notReady: (Remembered & { message: string }) | undefined;
  /** A guard of the harness ended the engine ({@link GUARD_ENDINGS}). */
  guardEnded: (Remembered & { message: string; code: string }) | undefined;
  spawnFailed: (Remembered & { message: string }) | undefined;
}

/**
 * Judges an attempt. Precedence:
 * 0. the engine could not be started (an `ENGINE_SPAWN_FAILED` diagnostic): failed, `ENGINE_SPAWN_FAILED` — its
 *    `exit {code: null}` is no exit of an engine;
 *    the harness's MCP startup watchdog ended an engine whose turn never started: failed, `MCP_SERVER_STARTUP_STALLED`;
 *    its terminal UI guard ended one that drew its UI into a pipe: failed, `ENGINE_NEEDS_TERMINAL`;
 * 1. the harness ended the engine (timeout → `ENGINE_TIMEOUT`, cancel → `ENGINE_CANCELED`): failed, whatever the
 *    stream says — a killed tool can still let the engine reach a scripted final turn before the group dies;
 * 2. a declared MCP server the script calls reported not ready (`mcpServersUsed`): failed, `MCP_SERVER_NOT_READY`;
 *    then a failed turn or a fatal engine error: failed (categorized by `errorPatterns`);
 * 3. the done marker in a final assistant message *followed by a turn end*: completed — a marker in a stream that
 *    was cut before its turn ended proves nothing;
 * 4. a turn end: awaiting_input;
 * 5. a user-written call that exited 0 with no engine event: no_session (see `expectSession`);
 * 6. an exit without a turn end: failed/engine_crash; no exit yet: unknown.
 * Non-fatal engine errors (retries) never fail an attempt on their own.
 * A wrapper over {@link createCompletionJudge}.
 */
export function judgeCompletion(events: readonly RaspEvent[], options: JudgeCompletionOptions): CompletionJudgement {
  const judge = createCompletionJudge(options);
  for (const event of events) judge.observe(event);
  return judge.verdict();
}

function decide(seen: Observed, options: JudgeCompletionOptions): CompletionJudgement {
  const { exit, turnEnd, fatal, marker } = seen;
  if (seen.spawnFailed) {
    const failure = { category: 'engine_crash', code: ENGINE_SPAWN_FAILED, message: seen.spawnFailed.message } as const;
    return { state: 'failed', reason: 'spawn_failed', failure, evidenceSeq: seen.spawnFailed.seq };
  }
  if (seen.guardEnded && exit) {
    const code = seen.guardEnded.code as ErrorCode;
    const reason = GUARD_ENDINGS[code]!;
    const failure = { category: categoryOfCode(code), code, message: seen.guardEnded.message };
    return { state: 'failed', reason, failure, evidenceSeq: seen.guardEnded.seq };
  }
  if (exit?.data.timed_out) {
    const failure = {
      category: 'timeout',
      code: 'ENGINE_TIMEOUT',
      message: `the engine did not finish within ${Math.round(exit.data.duration_ms)} ms; the harness killed it`,
    } as const;
    return { state: 'failed', reason: 'timed_out', failure, evidenceSeq: exit.seq };
  }
  if (exit?.data.canceled) {
    const failure = {
      category: 'canceled',
      code: 'ENGINE_CANCELED',
      message: 'the attempt was canceled before the agent finished; the harness killed it',
    } as const;
    return { state: 'failed', reason: 'canceled', failure, evidenceSeq: exit.seq };
  }

  if (seen.notReady) {
    const failure = { category: 'engine_crash', code: MCP_SERVER_NOT_READY, message: seen.notReady.message } as const;
    return { state: 'failed', reason: 'mcp_server_not_ready', failure, evidenceSeq: seen.notReady.seq };
  }
  const failedTurn = turnEnd?.data.status === 'failed' ? turnEnd : undefined;
  if (failedTurn || fatal) {
    const message = failedTurn ? (failedTurn.data.error ?? 'turn failed') : fatal!.message;
    const evidenceSeq = failedTurn ? failedTurn.seq : fatal!.seq;
    return {
      state: 'failed',
      reason: failedTurn ? 'turn_failed' : 'fatal_error',
      failure: classify(message, seen.latestRow, options),
      evidenceSeq,
    };
  }

  if (marker && turnEnd && turnEnd.seq > marker.seq)
    return { state: 'completed', reason: 'done_marker', evidenceSeq: marker.seq };
  if (turnEnd) return { state: 'awaiting_input', reason: 'turn_end_without_done_marker', evidenceSeq: turnEnd.seq };
  if (exit) {
    if (options.expectSession === false && exit.data.exit_code === 0 && !seen.engineEvents) {
      return { state: 'no_session', reason: 'exited_without_session', evidenceSeq: exit.seq };
    }
    const last = seen.lastError;
    const status = exit.data.signal ? `signal ${exit.data.signal}` : `code ${exit.data.exit_code}`;
    const markerNote = marker ? ' (a done marker was seen, but the turn never ended)' : '';
    const message = `the engine exited (${status}) without a turn end event${markerNote}${last ? `; last error: ${last}` : ''}`;
    // A last error that says why the engine would not start its turn names the failure (ErrorPattern.onExit).
    const named = last !== null && seen.latestRow?.onExit ? seen.latestRow : null;
    return {
      state: 'failed',
      reason: 'exited_without_turn_end',
      failure: named
        ? { category: named.category, code: named.code, message }
        : { category: 'engine_crash', code: 'ENGINE_EXITED_WITHOUT_TURN_END', message },
      evidenceSeq: exit.seq,
    };
  }
  return { state: 'unknown', reason: 'no_exit_event', evidenceSeq: null };
}

/**
 * Categorizes the failing message; when it is unspecific, earlier (retry) errors may still say why: the row of the
 * latest error message that matches a pattern.
 */
function classify(message: string, latestRow: ErrorPattern | null, options: JudgeCompletionOptions): CompletionFailure {
  const row = matchErrorPattern(message, options.errorPatterns) ?? latestRow;
  if (row) return { category: row.category, code: row.code, message };
  return { category: 'unknown', code: 'ENGINE_TURN_FAILED', message };
}
