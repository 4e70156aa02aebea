/**
 * RASP → FCMP for one attempt. FCMP is derived, never recorded: `conversation.started` first, assistant
 * messages (deltas and finals, each message id finalized once — the only place duplicates are dropped),
 * diagnostics as warnings, and exactly one terminal event decided by the completion judge (`completion.ts`).
 * Timestamps come from the RASP events they derive from, so a translation is reproducible.
 */
import type { EngineId, FcmpEvent, RaspEvent, RawRef } from '../protocol/index.js';
import { FCMP_VERSION } from '../protocol/versions.js';
import type { ErrorPattern } from '../engines/engine.js';
import { createCompletionJudge, type CompletionJudgement } from './completion.js';
import { normalizeResult, shellCommandOf } from './tool-calls.js';

/** Options of {@link translateRaspToFcmp}. */
export interface FcmpTranslateOptions {
  /** Run id written in every envelope. */
  runId: string;
  /** Engine id. */
  engine: EngineId;
  /** Attempt number (from 1). */
  attempt: number;
  /** Last FCMP seq of the previous attempt of the run, 0 if none: seq is strictly increasing per run. */
  seqStart: number;
  /** How the attempt was launched. */
  launch: 'start' | 'resume' | 'passthrough';
  /** The engine's error-pattern table. */
  errorPatterns: readonly ErrorPattern[];
  /** The user's message of a resume attempt; emitted as `user.input.replied`. */
  replyText?: string | null;
  /** Session known before the attempt (the resumed one); null for a new session. */
  sessionId?: string | null;
  /** Clock used only when there is no RASP event to take a timestamp from. */
  now?: () => Date;
  /** The verdict already reached for these events (the attempt judges once); judged here when absent. */
  judgement?: CompletionJudgement;
  /** Passed to {@link judgeCompletion} when no `judgement` is given. */
  expectSession?: boolean;
  /** Passed to {@link judgeCompletion}: the MCP servers whose tools the script calls. */
  mcpServersUsed?: readonly string[];
  /**
   * The ids of the events are scoped to turns (`EngineAdapter.turnScopedIds`): the ids seen so far are forgotten at
   * each `engine.turn.started` from the second on. Same output, memory flat in the number of turns. Default false.
   */
  turnScopedIds?: boolean;
  /** Exit codes the engine reported to the model, by call id (see `exitCodesFromModelRequests`), known from the start. */
  toolExitCodes?: ReadonlyMap<string, number>;
  /**
   * The engine's model requests will be seen as the attempt runs (a live attempt with a model server): a shell
   * result without an exit code is held, its item still `running`, until {@link FcmpTranslator.learnExitCodes} gives
   * the code (the engine's next model request states it) or {@link FcmpTranslator.finish} ends the attempt. Default
   * false: a recording's results are given as they come.
   */
  awaitModelExitCodes?: boolean;
}

/** Longest excerpt of a tool's input or output kept in FCMP (the whole text is in the raw logs). */
export const TOOL_EXCERPT_CHARS = 2000;

function excerpt(text: string | null): string | null {
  if (text === null) return null;
  return text.length > TOOL_EXCERPT_CHARS
    ? `${text.slice(0, TOOL_EXCERPT_CHARS)}… (${text.length - TOOL_EXCERPT_CHARS} more characters)`
    : text;
}

/** The type-correlated `type` + `data` part of an FCMP event. */
type Body = { [K in FcmpEvent['type']]: Pick<Extract<FcmpEvent, { type: K }>, 'type' | 'data'> }[FcmpEvent['type']];

const NONE: readonly FcmpEvent[] = Object.freeze([]);

/**
 * An incremental RASP → FCMP translator for one attempt: {@link FcmpTranslator.push} each RASP event in order,
 * then {@link FcmpTranslator.finish} once. It keeps no events: only the session, the ids already finalized, the
 * kinds of the tool calls seen and its completion judge.
 */
export interface FcmpTranslator {
  /** Translates the next RASP event; returns the FCMP events it gives (`conversation.started` comes with the first). */
  push(event: RaspEvent): readonly FcmpEvent[];
  /**
   * Ends the attempt: returns `conversation.started` if nothing was pushed, and the terminal event. The verdict is
   * `judgement` when given (with `evidenceRef` as its raw_ref when given), else the translator's own judge's.
   */
  finish(judgement?: CompletionJudgement, evidenceRef?: RawRef | null): FcmpEvent[];
  /** The verdict of the translator's own judge on the events pushed so far. */
  verdict(): CompletionJudgement;
  /**
   * Exit codes the engine stated to the model since the last call (see `exitCodesFromModelRequests`): returns the
   * `tool.result` of each held call they complete (its raw_ref is the result's own, its ts the latest event's).
   */
  learnExitCodes(codes: ReadonlyMap<string, number>): FcmpEvent[];
  /** Number of distinct tool calls seen so far. */
  readonly toolCalls: number;
  /** Number of shell results held for an exit code (see `awaitModelExitCodes`). */
  readonly heldResults: number;
}

/** A shell result held for the exit code the engine's next model request states. */
interface HeldResult {
  result: { status: string; output: string | null; exit_code: number | null };
  rawRef: RawRef | null;
}

/** What a translator reads and changes between events: its state, explicit. */
interface TranslatorState {
  readonly options: FcmpTranslateOptions;
  /** Message ids whose final was given (a later final or delta of the same id is dropped). */
  readonly finalized: Set<string>;
  /** The kind of each tool call seen, by call id. */
  readonly toolKinds: Map<string, string>;
  /** Tool calls with no result yet (`running`), by call id: their command or name, for the warning at the end. */
  readonly open: Map<string, string>;
  readonly held: Map<string, HeldResult>;
  readonly exitCodes: Map<string, number>;
  readonly judge: ReturnType<typeof createCompletionJudge>;
  /** The session id written in each envelope. */
  session: string | null;
  /** FCMP events made so far (their seq is `seqStart` plus this). */
  count: number;
  toolCalls: number;
  turns: number;
  /** Whether `conversation.started` was given. */
  started: boolean;
  /** The ts of the latest RASP event, the time of what `finish` and `learnExitCodes` give. */
  lastTs: string | null;
}

/** Creates an {@link FcmpTranslator}; `judgement` and `expectSession` of the options apply as in {@link translateRaspToFcmp}. */
export function createFcmpTranslator(options: FcmpTranslateOptions): FcmpTranslator {
  const state: TranslatorState = {
    options,
    finalized: new Set(),
    toolKinds: new Map(),
    open: new Map(),
    held: new Map(),
    exitCodes: new Map(options.toolExitCodes ?? []),
    judge: createCompletionJudge({
      errorPatterns: options.errorPatterns,
      expectSession: options.expectSession ?? true,
      ...(options.mcpServersUsed ? { mcpServersUsed: options.mcpServersUsed } : {}),
    }),
    session: options.sessionId ?? null,
    count: 0,
    toolCalls: 0,
    turns: 0,
    started: false,
    lastTs: null,
  };
  return {
    push: (event) => pushEvent(state, event),
    finish: (judgement, evidenceRef) => finishTranslation(state, judgement, evidenceRef),
    verdict: () => state.judge.verdict(),
    learnExitCodes: (codes) => learnExitCodes(state, codes),
    get toolCalls() {
      return state.toolCalls;
    },
    get heldResults() {
      return state.held.size;
    },
  };
}

/** An FCMP event in its envelope; counts it (reads `session`, changes `count`). */
function makeEvent(state: TranslatorState, body: Body, ts: string, rawRef: RawRef | null): FcmpEvent {
  const { runId, engine, attempt, seqStart } = state.options;
  return {
    protocol_version: FCMP_VERSION,
    run_id: runId,
    seq: seqStart + ++state.count,
    ts,
    engine,
    session_id: state.session,
    meta: { attempt },
    raw_ref: rawRef ? { stream: rawRef.stream, from: rawRef.from, to: rawRef.to } : null,
    type: body.type,
    data: body.data,
  } as FcmpEvent;
}

/** Gives `conversation.started` (and a resume's `user.input.replied`) into `out`; changes `started`. */
function startConversation(state: TranslatorState, out: FcmpEvent[], ts: string): void {
  const { launch, replyText } = state.options;
  state.started = true;
  out.push(makeEvent(state, { type: 'conversation.started', data: { launch } }, ts, null));
  if (launch === 'resume' && replyText)
    out.push(makeEvent(state, { type: 'user.input.replied', data: { text: replyText } }, ts, null));
}

/** {@link FcmpTranslator.push}: the FCMP events of the next RASP event. */
function pushEvent(state: TranslatorState, event: RaspEvent): readonly FcmpEvent[] {
  // Most RASP events give no FCMP event: they share one empty array instead of allocating theirs.
  let out: FcmpEvent[] | undefined;
  if (!state.started) startConversation(state, (out = []), event.ts);
  state.lastTs = event.ts;
  state.judge.observe(event);
  const data = event.data;
  switch (data.type) {
    case 'raw.line':
      return out ?? NONE;
    case 'engine.session':
      state.session = data.session_id;
      return out ?? NONE;
    case 'engine.turn.started':
      state.turns += 1;
      if (state.options.turnScopedIds && state.turns >= 2) {
        state.finalized.clear();
        state.toolKinds.clear();
      }
      return out ?? NONE;
    case 'engine.tool.call':
      return onToolCall(state, event, data, out);
    case 'engine.tool.result':
      return onToolResult(state, event, data, out);
    default: {
      const body = bodyOf(data, state.finalized);
      if (body) (out ??= []).push(makeEvent(state, body, event.ts, event.raw_ref));
      return out ?? NONE;
    }
  }
}

/** A tool call's `tool.call`, once per call id; changes `toolKinds`, `toolCalls` and `open`. */
function onToolCall(
  state: TranslatorState,
  event: RaspEvent,
  data: Extract<RaspEvent['data'], { type: 'engine.tool.call' }>,
  out: FcmpEvent[] | undefined,
): readonly FcmpEvent[] {
  if (state.toolKinds.has(data.call_id)) return out ?? NONE;
  state.toolKinds.set(data.call_id, data.kind);
  state.toolCalls += 1;
  const command = data.kind === 'shell' ? shellCommandOf(data.input) : null;
  state.open.set(data.call_id, command ?? data.name);
  const input =
    command === null && data.input !== undefined
      ? excerpt(typeof data.input === 'string' ? data.input : JSON.stringify(data.input))
      : null;
  (out ??= []).push(
    makeEvent(
      state,
      {
        type: 'tool.call',
        data: { call_id: data.call_id, kind: data.kind, name: data.name, command, input_excerpt: input },
      },
      event.ts,
      event.raw_ref,
    ),
  );
  return out;
}

/**
 * A tool result's `tool.result`, or nothing while a shell result waits for its exit code (`awaitModelExitCodes`);
 * changes `open` and `held`.
 */
function onToolResult(
  state: TranslatorState,
  event: RaspEvent,
  data: Extract<RaspEvent['data'], { type: 'engine.tool.result' }>,
  out: FcmpEvent[] | undefined,
): readonly FcmpEvent[] {
  state.open.delete(data.call_id);
  const call = { callId: data.call_id, kind: state.toolKinds.get(data.call_id) ?? 'other' };
  const result = normalizeResult(call, data, state.exitCodes);
  if (
    state.options.awaitModelExitCodes &&
    call.kind === 'shell' &&
    result.exitCode === null &&
    data.status !== 'declined' &&
    data.status !== 'in_progress'
  ) {
    state.held.set(data.call_id, { result: data, rawRef: event.raw_ref });
    return out ?? NONE;
  }
  state.held.delete(data.call_id);
  (out ??= []).push(makeEvent(state, resultBody(data.call_id, result), event.ts, event.raw_ref));
  return out;
}

/** The time of what is given with no RASP event of its own: the latest event's, else the clock's. */
function latestTs(state: TranslatorState): string {
  return state.lastTs ?? (state.options.now ?? (() => new Date()))().toISOString();
}

/** {@link FcmpTranslator.finish}: the held results, the abandoned calls and the terminal event; empties `held`. */
function finishTranslation(
  state: TranslatorState,
  judgement: CompletionJudgement | undefined,
  evidenceRef: RawRef | null | undefined,
): FcmpEvent[] {
  const out: FcmpEvent[] = [];
  const fallbackTs = latestTs(state);
  if (!state.started) startConversation(state, out, fallbackTs);
  // What the model requests never stated stays as the engine reported it.
  for (const [callId, { result, rawRef }] of state.held)
    out.push(
      makeEvent(
        state,
        resultBody(callId, normalizeResult({ callId, kind: 'shell' }, result, state.exitCodes)),
        fallbackTs,
        rawRef,
      ),
    );
  state.held.clear();
  for (const event of abandon(state.open)) out.push(makeEvent(state, event, fallbackTs, null));
  const verdict = judgement ?? state.options.judgement ?? state.judge.verdict();
  const terminal = terminalOf(verdict);
  const rawRef = evidenceRef !== undefined ? evidenceRef : state.judge.rawRefOf(verdict.evidenceSeq);
  if (terminal) out.push(makeEvent(state, terminal, fallbackTs, rawRef));
  return out;
}

/** {@link FcmpTranslator.learnExitCodes}: changes `exitCodes`, gives each held result they complete out of `held`. */
function learnExitCodes(state: TranslatorState, codes: ReadonlyMap<string, number>): FcmpEvent[] {
  for (const [id, code] of codes) state.exitCodes.set(id, code);
  if (state.held.size === 0) return [];
  const out: FcmpEvent[] = [];
  const ts = latestTs(state);
  for (const [callId, { result, rawRef }] of state.held) {
    const normalized = normalizeResult({ callId, kind: 'shell' }, result, state.exitCodes);
    if (normalized.exitCode === null) continue;
    state.held.delete(callId);
    out.push(makeEvent(state, resultBody(callId, normalized), ts, rawRef));
  }
  return out;
}

/** The `tool.result` of a call from its normalized result. */
function resultBody(callId: string, result: ReturnType<typeof normalizeResult>): Body {
  return {
    type: 'tool.result',
    data: {
      call_id: callId,
      status: result.status ?? 'completed',
      exit_code: result.exitCode,
      output_excerpt: excerpt(result.output),
    },
  };
}

/** Translates the RASP events of one attempt into FCMP events (a wrapper over {@link createFcmpTranslator}). */
export function translateRaspToFcmp(rasp: readonly RaspEvent[], options: FcmpTranslateOptions): FcmpEvent[] {
  const translator = createFcmpTranslator(options);
  const out: FcmpEvent[] = [];
  for (const event of rasp) for (const fcmp of translator.push(event)) out.push(fcmp);
  const judgement = options.judgement ?? translator.verdict();
  const evidence = rasp.find((e) => e.seq === judgement.evidenceSeq)?.raw_ref ?? null;
  for (const fcmp of translator.finish(judgement, evidence)) out.push(fcmp);
  return out;
}

/** The status of a tool call whose attempt ended before its result came: its process outlived the turn. */
export const ABANDONED_TOOL_STATUS = 'abandoned';

/**
 * For each call still open when the attempt ends: a `tool.result` with status `abandoned` and a `TOOL_CALL_ABANDONED`
 * warning. codex's `exec_command` returns after 10 s with the process still running; a turn that ends before a poll
 * saw it exit leaves the call without a result, and its command may never have finished.
 */
function* abandon(open: ReadonlyMap<string, string>): Generator<Body> {
  for (const [callId, what] of open) {
    yield {
      type: 'tool.result',
      data: { call_id: callId, status: ABANDONED_TOOL_STATUS, exit_code: null, output_excerpt: null },
    };
    yield {
      type: 'diagnostic.warning',
      data: {
        code: 'TOOL_CALL_ABANDONED',
        message: `tool call ${callId} (${excerpt(what)}) had no result when the attempt ended: its process outlived the turn and may never have finished; let the agent wait for it (a scripted shell turn waits unless it says wait: false)`,
        level: 'warning',
      },
    };
  }
}

function bodyOf(data: RaspEvent['data'], finalized: Set<string>): Body | null {
  switch (data.type) {
    case 'engine.assistant.message': {
      const { message_id, text } = data;
      if (!data.final)
        return finalized.has(message_id) ? null : { type: 'assistant.message.delta', data: { message_id, text } };
      if (finalized.has(message_id)) return null;
      finalized.add(message_id);
      return { type: 'assistant.message.final', data: { message_id, text } };
    }
    case 'diagnostic':
      return {
        type: 'diagnostic.warning',
        data: { code: data.diagnostic.code, message: data.diagnostic.message, level: data.diagnostic.level },
      };
    case 'engine.error':
      // Retries ("Reconnecting... 2/5") are worth showing, but they do not end the conversation.
      return data.fatal
        ? null
        : {
            type: 'diagnostic.warning',
            data: { code: 'ENGINE_NONFATAL_ERROR', message: data.message, level: 'warning' },
          };
    default:
      return null;
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
