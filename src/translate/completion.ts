/**
 * The completion judge: decides from an attempt's RASP events whether the agent finished, waits for input,
 * failed or was interrupted. Engines can exit 0 on an empty or failed turn (codex does), so the exit code is
 * never the evidence; the events are.
 */
import type { FailureCategory, RaspData, RaspEvent } from '../protocol/index.js';
import type { ErrorPattern } from '../engines/engine.js';

/** The done-marker token of the completion contract appended to injected skills. */
export const DONE_MARKER = '__SKILL_DONE__';

/** `{"__skill_done__": true}` inside any JSON object, fenced or not, with any spacing. */
const DONE_JSON = /"__skill_done__"\s*:\s*true\b/;

/** `text` without the done marker: the `__SKILL_DONE__` token (and its line) and a trailing `{"__skill_done__": true}` block. */
export function stripDoneMarker(text: string | null): string | null {
  if (text === null) return null;
  return text
    .replace(/(?:```(?:json)?\s*)?\{\s*"__skill_done__"\s*:\s*true\s*\}(?:\s*```)?\s*$/, '')
    .split('\n').filter((line) => line.trim() !== DONE_MARKER).join('\n')
    .replace(DONE_MARKER, '')
    .trim();
}

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
}

/** Parsed engine events: the evidence that a session started at all. */
const ENGINE_EVENT_TYPES = new Set<string>([
  'engine.session', 'engine.assistant.message', 'engine.reasoning', 'engine.tool.call', 'engine.tool.result',
  'engine.file.change', 'engine.usage', 'engine.turn.started', 'engine.turn.end', 'engine.error',
]);

/** Returns the first pattern row matching `message`, or null. */
export function matchErrorPattern(message: string, patterns: readonly ErrorPattern[]): ErrorPattern | null {
  return patterns.find((row) => row.pattern.test(message)) ?? null;
}

type Of<T extends RaspData['type']> = RaspEvent & { data: Extract<RaspData, { type: T }> };
const is = <T extends RaspData['type']>(type: T) => (event: RaspEvent): event is Of<T> => event.data.type === type;

/**
 * Judges an attempt. Precedence:
 * 1. the harness ended the engine (timeout → `ENGINE_TIMEOUT`, cancel → `ENGINE_CANCELED`): failed, whatever the
 *    stream says — a killed tool can still let the engine reach a scripted final turn before the group dies;
 * 2. a failed turn or a fatal engine error: failed (categorized by `errorPatterns`);
 * 3. the done marker in a final assistant message *followed by a turn end*: completed — a marker in a stream that
 *    was cut before its turn ended proves nothing;
 * 4. a turn end: awaiting_input;
 * 5. a user-written call that exited 0 with no engine event: no_session (see `expectSession`);
 * 6. an exit without a turn end: failed/engine_crash; no exit yet: unknown.
 * Non-fatal engine errors (retries) never fail an attempt on their own.
 */
export function judgeCompletion(events: readonly RaspEvent[], options: JudgeCompletionOptions): CompletionJudgement {
  const exit = events.findLast(is('lifecycle.exited'));
  if (exit?.data.timed_out) {
    const failure = { category: 'timeout', code: 'ENGINE_TIMEOUT', message: `the engine did not finish within ${Math.round(exit.data.duration_ms)} ms; the harness killed it` } as const;
    return { state: 'failed', reason: 'timed_out', failure, evidenceSeq: exit.seq };
  }
  if (exit?.data.canceled) {
    const failure = { category: 'canceled', code: 'ENGINE_CANCELED', message: 'the attempt was canceled before the agent finished; the harness killed it' } as const;
    return { state: 'failed', reason: 'canceled', failure, evidenceSeq: exit.seq };
  }

  const turnEnd = events.findLast(is('engine.turn.end'));
  const fatal = events.find((e) => is('engine.error')(e) && e.data.fatal) as Of<'engine.error'> | undefined;
  const failedTurn = turnEnd?.data.status === 'failed' ? turnEnd : undefined;
  if (failedTurn || fatal) {
    const decisive = failedTurn ?? fatal!;
    const message = failedTurn ? (failedTurn.data.error ?? 'turn failed') : fatal!.data.message;
    return { state: 'failed', reason: failedTurn ? 'turn_failed' : 'fatal_error', failure: classify(message, events, options), evidenceSeq: decisive.seq };
  }

  const marker = events.find((e) => is('engine.assistant.message')(e) && e.data.final && hasDoneMarker(e.data.text));
  if (marker && turnEnd && turnEnd.seq > marker.seq) return { state: 'completed', reason: 'done_marker', evidenceSeq: marker.seq };
  if (turnEnd) return { state: 'awaiting_input', reason: 'turn_end_without_done_marker', evidenceSeq: turnEnd.seq };
  if (exit) {
    if (options.expectSession === false && exit.data.exit_code === 0 && !events.some((e) => ENGINE_EVENT_TYPES.has(e.data.type))) {
      return { state: 'no_session', reason: 'exited_without_session', evidenceSeq: exit.seq };
    }
    const last = lastErrorMessage(events);
    const status = exit.data.signal ? `signal ${exit.data.signal}` : `code ${exit.data.exit_code}`;
    const markerNote = marker ? ' (a done marker was seen, but the turn never ended)' : '';
    const message = `the engine exited (${status}) without a turn end event${markerNote}${last ? `; last error: ${last}` : ''}`;
    return { state: 'failed', reason: 'exited_without_turn_end', failure: { category: 'engine_crash', code: 'ENGINE_EXITED_WITHOUT_TURN_END', message }, evidenceSeq: exit.seq };
  }
  return { state: 'unknown', reason: 'no_exit_event', evidenceSeq: null };
}

/** Categorizes the failing message; when it is unspecific, earlier (retry) errors may still say why. */
function classify(message: string, events: readonly RaspEvent[], options: JudgeCompletionOptions): CompletionFailure {
  const candidates = [message, ...errorMessages(events).reverse()];
  for (const candidate of candidates) {
    const row = matchErrorPattern(candidate, options.errorPatterns);
    if (row) return { category: row.category, code: row.code, message };
  }
  return { category: 'unknown', code: 'ENGINE_TURN_FAILED', message };
}

function errorMessages(events: readonly RaspEvent[]): string[] {
  return events.flatMap((e) => {
    if (e.data.type === 'engine.error') return [e.data.message];
    if (e.data.type === 'diagnostic' && e.data.diagnostic.code === 'ENGINE_STDERR') return [e.data.diagnostic.message];
    return [];
  });
}

function lastErrorMessage(events: readonly RaspEvent[]): string | null {
  return errorMessages(events).at(-1) ?? null;
}
