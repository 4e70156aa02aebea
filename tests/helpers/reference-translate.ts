/**
 * The array implementations of the completion judge and the RASP → FCMP translation as they were before they became
 * incremental (commit 9770011), frozen here as the oracle the incremental ones must agree with, event for event.
 * Not used by the harness; do not "fix" it. Rules added since, with the judge's and the translator's:
 * ErrorPattern.onExit; an ENGINE_SPAWN_FAILED diagnostic is the verdict; a call with no result ends `abandoned`.
 */
import { FCMP_VERSION, type FcmpEvent, type RaspData, type RaspEvent, type RawRef } from '../../src/protocol/index.js';
import type {
  CompletionFailure,
  CompletionJudgement,
  FcmpTranslateOptions,
  JudgeCompletionOptions,
} from '../../src/translate/index.js';
import { hasDoneMarker, matchErrorPattern } from '../../src/translate/completion.js';
import { normalizeResult, shellCommandOf } from '../../src/translate/tool-calls.js';
import { TOOL_EXCERPT_CHARS } from '../../src/translate/fcmp.js';

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
type Of<T extends RaspData['type']> = RaspEvent & { data: Extract<RaspData, { type: T }> };
const is =
  <T extends RaspData['type']>(type: T) =>
  (event: RaspEvent): event is Of<T> =>
    event.data.type === type;

/** The old `judgeCompletion`. */
export function referenceJudgeCompletion(
  events: readonly RaspEvent[],
  options: JudgeCompletionOptions,
): CompletionJudgement {
  const exit = events.findLast(is('lifecycle.exited'));
  const spawnFailed = events.find(
    (e): e is Of<'diagnostic'> => is('diagnostic')(e) && e.data.diagnostic.code === 'ENGINE_SPAWN_FAILED',
  );
  if (spawnFailed) {
    const failure = {
      category: 'engine_crash',
      code: 'ENGINE_SPAWN_FAILED',
      message: spawnFailed.data.diagnostic.message,
    } as const;
    return { state: 'failed', reason: 'spawn_failed', failure, evidenceSeq: spawnFailed.seq };
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

  const turnEnd = events.findLast(is('engine.turn.end'));
  const fatal = events.find((e) => is('engine.error')(e) && e.data.fatal) as Of<'engine.error'> | undefined;
  const failedTurn = turnEnd?.data.status === 'failed' ? turnEnd : undefined;
  if (failedTurn || fatal) {
    const decisive = failedTurn ?? fatal!;
    const message = failedTurn ? (failedTurn.data.error ?? 'turn failed') : fatal!.data.message;
    return {
      state: 'failed',
      reason: failedTurn ? 'turn_failed' : 'fatal_error',
      failure: classify(message, events, options),
      evidenceSeq: decisive.seq,
    };
  }

  const marker = events.find((e) => is('engine.assistant.message')(e) && e.data.final && hasDoneMarker(e.data.text));
  if (marker && turnEnd && turnEnd.seq > marker.seq)
    return { state: 'completed', reason: 'done_marker', evidenceSeq: marker.seq };
  if (turnEnd) return { state: 'awaiting_input', reason: 'turn_end_without_done_marker', evidenceSeq: turnEnd.seq };
  if (exit) {
    if (
      options.expectSession === false &&
      exit.data.exit_code === 0 &&
      !events.some((e) => ENGINE_EVENT_TYPES.has(e.data.type))
    ) {
      return { state: 'no_session', reason: 'exited_without_session', evidenceSeq: exit.seq };
    }
    const last = lastErrorMessage(events);
    const status = exit.data.signal ? `signal ${exit.data.signal}` : `code ${exit.data.exit_code}`;
    const markerNote = marker ? ' (a done marker was seen, but the turn never ended)' : '';
    const message = `the engine exited (${status}) without a turn end event${markerNote}${last ? `; last error: ${last}` : ''}`;
    // Added with ErrorPattern.onExit (after the freeze): the row of the latest error that matches one names the
    // failure when it says why the engine would not start its turn.
    const row =
      errorMessages(events)
        .map((m) => matchErrorPattern(m, options.errorPatterns))
        .filter((r) => r !== null)
        .at(-1) ?? null;
    const named = last !== null && row?.onExit ? row : null;
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

function excerpt(text: string | null): string | null {
  if (text === null) return null;
  return text.length > TOOL_EXCERPT_CHARS
    ? `${text.slice(0, TOOL_EXCERPT_CHARS)}… (${text.length - TOOL_EXCERPT_CHARS} more characters)`
    : text;
}

type Envelope = Omit<FcmpEvent, 'type' | 'data'>;
/** The type-correlated `type` + `data` part of an FCMP event. */
type Body = { [K in FcmpEvent['type']]: Pick<Extract<FcmpEvent, { type: K }>, 'type' | 'data'> }[FcmpEvent['type']];

/** The old `translateRaspToFcmp`. */
export function referenceTranslateRaspToFcmp(rasp: readonly RaspEvent[], options: FcmpTranslateOptions): FcmpEvent[] {
  const out: FcmpEvent[] = [];
  const finalized = new Set<string>();
  let session = options.sessionId ?? null;
  const fallbackTs = rasp[0]?.ts ?? (options.now ?? (() => new Date()))().toISOString();

  const push = (body: Body, ts: string, rawRef: RawRef | null): void => {
    const envelope: Envelope = {
      protocol_version: FCMP_VERSION,
      run_id: options.runId,
      seq: options.seqStart + out.length + 1,
      ts,
      engine: options.engine,
      session_id: session,
      meta: { attempt: options.attempt },
      raw_ref: rawRef ? { ...rawRef } : null,
    };
    out.push({ ...envelope, ...body } as FcmpEvent);
  };

  push({ type: 'conversation.started', data: { launch: options.launch } }, fallbackTs, null);
  if (options.launch === 'resume' && options.replyText) {
    push({ type: 'user.input.replied', data: { text: options.replyText } }, fallbackTs, null);
  }

  const toolKinds = new Map<string, string>();
  const open = new Map<string, string>();
  for (const event of rasp) {
    const data = event.data;
    if (data.type === 'engine.session') session = data.session_id;
    if (data.type === 'engine.tool.call') {
      if (toolKinds.has(data.call_id)) continue;
      toolKinds.set(data.call_id, data.kind);
      const command = data.kind === 'shell' ? shellCommandOf(data.input) : null;
      open.set(data.call_id, command ?? data.name);
      const input =
        command === null && data.input !== undefined
          ? excerpt(typeof data.input === 'string' ? data.input : JSON.stringify(data.input))
          : null;
      push(
        {
          type: 'tool.call',
          data: { call_id: data.call_id, kind: data.kind, name: data.name, command, input_excerpt: input },
        },
        event.ts,
        event.raw_ref,
      );
      continue;
    }
    if (data.type === 'engine.tool.result') {
      open.delete(data.call_id);
      const result = normalizeResult(
        { callId: data.call_id, kind: toolKinds.get(data.call_id) ?? 'other' },
        data,
        options.toolExitCodes,
      );
      push(
        {
          type: 'tool.result',
          data: {
            call_id: data.call_id,
            status: result.status ?? data.status,
            exit_code: result.exitCode,
            output_excerpt: excerpt(result.output),
          },
        },
        event.ts,
        event.raw_ref,
      );
      continue;
    }
    for (const body of bodiesOf(data, finalized)) push(body, event.ts, event.raw_ref);
  }

  const judgement =
    options.judgement ??
    referenceJudgeCompletion(rasp, {
      errorPatterns: options.errorPatterns,
      expectSession: options.expectSession ?? true,
    });
  const evidence = rasp.find((e) => e.seq === judgement.evidenceSeq);
  for (const [callId, what] of open) {
    const ts = rasp.at(-1)?.ts ?? fallbackTs;
    push(
      { type: 'tool.result', data: { call_id: callId, status: 'abandoned', exit_code: null, output_excerpt: null } },
      ts,
      null,
    );
    push(
      {
        type: 'diagnostic.warning',
        data: {
          code: 'TOOL_CALL_ABANDONED',
          message: `tool call ${callId} (${excerpt(what)}) had no result when the attempt ended: its process outlived the turn and may never have finished; let the agent wait for it (a scripted shell turn waits unless it says wait: false)`,
          level: 'warning',
        },
      },
      ts,
      null,
    );
  }
  const terminal = terminalOf(judgement);
  if (terminal) push(terminal, rasp.at(-1)?.ts ?? fallbackTs, evidence?.raw_ref ?? null);
  return out;
}

function bodiesOf(data: RaspEvent['data'], finalized: Set<string>): Body[] {
  switch (data.type) {
    case 'engine.assistant.message': {
      const { message_id, text } = data;
      if (!data.final)
        return finalized.has(message_id) ? [] : [{ type: 'assistant.message.delta', data: { message_id, text } }];
      if (finalized.has(message_id)) return [];
      finalized.add(message_id);
      return [{ type: 'assistant.message.final', data: { message_id, text } }];
    }
    case 'diagnostic':
      return [
        {
          type: 'diagnostic.warning',
          data: { code: data.diagnostic.code, message: data.diagnostic.message, level: data.diagnostic.level },
        },
      ];
    case 'engine.error':
      // Retries ("Reconnecting... 2/5") are worth showing, but they do not end the conversation.
      return data.fatal
        ? []
        : [
            {
              type: 'diagnostic.warning',
              data: { code: 'ENGINE_NONFATAL_ERROR', message: data.message, level: 'warning' },
            },
          ];
    default:
      return [];
  }
}

/** The one terminal event of an attempt; none for a call that started no session (nothing to complete or fail). */
function terminalOf(judgement: CompletionJudgement): Body | null {
  switch (judgement.state) {
    case 'no_session':
      return null;
    case 'completed':
      return { type: 'conversation.completed', data: { reason: judgement.reason } };
    case 'awaiting_input':
      return { type: 'user.input.required', data: { reason: judgement.reason } };
    case 'failed':
    case 'interrupted': {
      const failure = judgement.failure ?? {
        category: 'unknown',
        code: 'ENGINE_TURN_FAILED',
        message: judgement.reason,
      };
      return { type: 'conversation.failed', data: { ...failure } };
    }
    default:
      return {
        type: 'conversation.failed',
        data: {
          category: 'unknown',
          code: 'ATTEMPT_STATE_UNKNOWN',
          message: `the attempt has no exit event (${judgement.reason})`,
        },
      };
  }
}
