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

/** Creates an {@link FcmpTranslator}; `judgement` and `expectSession` of the options apply as in {@link translateRaspToFcmp}. */
export function createFcmpTranslator(options: FcmpTranslateOptions): FcmpTranslator {
  const { runId, engine, attempt, seqStart } = options;
  const finalized = new Set<string>();
  const toolKinds = new Map<string, string>();
  /** Tool calls with no result yet (`running`), by call id: their command or name, for the warning at the end. */
  const open = new Map<string, string>();
  const held = new Map<string, HeldResult>();
  const exitCodes = new Map(options.toolExitCodes ?? []);
  const judge = createCompletionJudge({
    errorPatterns: options.errorPatterns,
    expectSession: options.expectSession ?? true,
    ...(options.mcpServersUsed ? { mcpServersUsed: options.mcpServersUsed } : {}),
  });
  let session = options.sessionId ?? null;
  let count = 0;
  let toolCalls = 0;
  let turns = 0;
  let started = false;
  let lastTs: string | null = null;

  const make = (body: Body, ts: string, rawRef: RawRef | null): FcmpEvent =>
    ({
      protocol_version: FCMP_VERSION,
      run_id: runId,
      seq: seqStart + ++count,
      ts,
      engine,
      session_id: session,
      meta: { attempt },
      raw_ref: rawRef ? { stream: rawRef.stream, from: rawRef.from, to: rawRef.to } : null,
      type: body.type,
      data: body.data,
    }) as FcmpEvent;

  const start = (out: FcmpEvent[], ts: string): void => {
    started = true;
    out.push(make({ type: 'conversation.started', data: { launch: options.launch } }, ts, null));
    if (options.launch === 'resume' && options.replyText)
      out.push(make({ type: 'user.input.replied', data: { text: options.replyText } }, ts, null));
  };

  return {
    push(event) {
      // Most RASP events give no FCMP event: they share one empty array instead of allocating theirs.
      let out: FcmpEvent[] | undefined;
      if (!started) start((out = []), event.ts);
      lastTs = event.ts;
      judge.observe(event);
      const data = event.data;
      switch (data.type) {
        case 'raw.line':
          return out ?? NONE;
        case 'engine.session':
          session = data.session_id;
          return out ?? NONE;
        case 'engine.turn.started':
          turns += 1;
          if (options.turnScopedIds && turns >= 2) {
            finalized.clear();
            toolKinds.clear();
          }
          return out ?? NONE;
        case 'engine.tool.call': {
          if (toolKinds.has(data.call_id)) return out ?? NONE;
          toolKinds.set(data.call_id, data.kind);
          toolCalls += 1;
          const command = data.kind === 'shell' ? shellCommandOf(data.input) : null;
          open.set(data.call_id, command ?? data.name);
          const input =
            command === null && data.input !== undefined
              ? excerpt(typeof data.input === 'string' ? data.input : JSON.stringify(data.input))
              : null;
          (out ??= []).push(
            make(
              {
                type: 'tool.call',
                data: { call_id: data.call_id, kind: data.kind, name: data.name, command, input_excerpt: input },
              },
              event.ts,
              event.raw_ref,
            ),
          );
          return out ?? NONE;
        }
        case 'engine.tool.result': {
          open.delete(data.call_id);
          const call = { callId: data.call_id, kind: toolKinds.get(data.call_id) ?? 'other' };
          const result = normalizeResult(call, data, exitCodes);
          if (
            options.awaitModelExitCodes &&
            call.kind === 'shell' &&
            result.exitCode === null &&
            data.status !== 'declined' &&
            data.status !== 'in_progress'
          ) {
            held.set(data.call_id, { result: data, rawRef: event.raw_ref });
            return out ?? NONE;
          }
          held.delete(data.call_id);
          (out ??= []).push(make(resultBody(data.call_id, result), event.ts, event.raw_ref));
          return out ?? NONE;
        }
        default: {
          const body = bodyOf(data, finalized);
          if (body) (out ??= []).push(make(body, event.ts, event.raw_ref));
          return out ?? NONE;
        }
      }
    },
    finish(judgement, evidenceRef) {
      const out: FcmpEvent[] = [];
      const fallbackTs = lastTs ?? (options.now ?? (() => new Date()))().toISOString();
      if (!started) start(out, fallbackTs);
      // What the model requests never stated stays as the engine reported it.
      for (const [callId, { result, rawRef }] of held)
        out.push(
          make(resultBody(callId, normalizeResult({ callId, kind: 'shell' }, result, exitCodes)), fallbackTs, rawRef),
        );
      held.clear();
      for (const event of abandon(open)) out.push(make(event, fallbackTs, null));
      const verdict = judgement ?? options.judgement ?? judge.verdict();
      const terminal = terminalOf(verdict);
      const rawRef = evidenceRef !== undefined ? evidenceRef : judge.rawRefOf(verdict.evidenceSeq);
      if (terminal) out.push(make(terminal, fallbackTs, rawRef));
      return out;
    },
    verdict: () => judge.verdict(),
    learnExitCodes(codes) {
      for (const [id, code] of codes) exitCodes.set(id, code);
      if (held.size === 0) return [];
      const out: FcmpEvent[] = [];
      const ts = lastTs ?? (options.now ?? (() => new Date()))().toISOString();
      for (const [callId, { result, rawRef }] of held) {
        const normalized = normalizeResult({ callId, kind: 'shell' }, result, exitCodes);
        if (normalized.exitCode === null) continue;
        held.delete(callId);
        out.push(make(resultBody(callId, normalized), ts, rawRef));
      }
      return out;
    },
    get toolCalls() {
      return toolCalls;
    },
    get heldResults() {
      return held.size;
    },
  };
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
