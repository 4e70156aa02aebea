/**
 * RASP → FCMP for one attempt. FCMP is derived, never recorded: `conversation.started` first, assistant
 * messages (deltas and finals, each message id finalized once — the only place duplicates are dropped),
 * diagnostics as warnings, and exactly one terminal event decided by {@link judgeCompletion}.
 * Timestamps come from the RASP events they derive from, so a translation is reproducible.
 */
import { FCMP_VERSION, type EngineId, type FcmpEvent, type RaspEvent, type RawRef } from '../protocol/index.js';
import type { ErrorPattern } from '../engines/engine.js';
import { judgeCompletion, type CompletionJudgement } from './completion.js';
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
  /** Exit codes the engine reported to the model, by call id (see `exitCodesFromModelRequests`). */
  toolExitCodes?: ReadonlyMap<string, number>;
}

/** Longest excerpt of a tool's input or output kept in FCMP (the whole text is in the raw logs). */
export const TOOL_EXCERPT_CHARS = 2000;

function excerpt(text: string | null): string | null {
  if (text === null) return null;
  return text.length > TOOL_EXCERPT_CHARS ? `${text.slice(0, TOOL_EXCERPT_CHARS)}… (${text.length - TOOL_EXCERPT_CHARS} more characters)` : text;
}

type Envelope = Omit<FcmpEvent, 'type' | 'data'>;
/** The type-correlated `type` + `data` part of an FCMP event. */
type Body = { [K in FcmpEvent['type']]: Pick<Extract<FcmpEvent, { type: K }>, 'type' | 'data'> }[FcmpEvent['type']];

/** Translates the RASP events of one attempt into FCMP events. */
export function translateRaspToFcmp(rasp: readonly RaspEvent[], options: FcmpTranslateOptions): FcmpEvent[] {
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
  for (const event of rasp) {
    const data = event.data;
    if (data.type === 'engine.session') session = data.session_id;
    if (data.type === 'engine.tool.call') {
      if (toolKinds.has(data.call_id)) continue;
      toolKinds.set(data.call_id, data.kind);
      const command = data.kind === 'shell' ? shellCommandOf(data.input) : null;
      const input = command === null && data.input !== undefined ? excerpt(typeof data.input === 'string' ? data.input : JSON.stringify(data.input)) : null;
      push({ type: 'tool.call', data: { call_id: data.call_id, kind: data.kind, name: data.name, command, input_excerpt: input } }, event.ts, event.raw_ref);
      continue;
    }
    if (data.type === 'engine.tool.result') {
      const result = normalizeResult({ callId: data.call_id, kind: toolKinds.get(data.call_id) ?? 'other' }, data, options.toolExitCodes);
      push({ type: 'tool.result', data: { call_id: data.call_id, status: result.status ?? data.status, exit_code: result.exitCode, output_excerpt: excerpt(result.output) } }, event.ts, event.raw_ref);
      continue;
    }
    for (const body of bodiesOf(data, finalized)) push(body, event.ts, event.raw_ref);
  }

  const judgement = options.judgement ?? judgeCompletion(rasp, { errorPatterns: options.errorPatterns, expectSession: options.expectSession ?? true });
  const evidence = rasp.find((e) => e.seq === judgement.evidenceSeq);
  const terminal = terminalOf(judgement);
  if (terminal) push(terminal, rasp.at(-1)?.ts ?? fallbackTs, evidence?.raw_ref ?? null);
  return out;
}

function bodiesOf(data: RaspEvent['data'], finalized: Set<string>): Body[] {
  switch (data.type) {
    case 'engine.assistant.message': {
      const { message_id, text } = data;
      if (!data.final) return finalized.has(message_id) ? [] : [{ type: 'assistant.message.delta', data: { message_id, text } }];
      if (finalized.has(message_id)) return [];
      finalized.add(message_id);
      return [{ type: 'assistant.message.final', data: { message_id, text } }];
    }
    case 'diagnostic':
      return [{ type: 'diagnostic.warning', data: { code: data.diagnostic.code, message: data.diagnostic.message, level: data.diagnostic.level } }];
    case 'engine.error':
      // Retries ("Reconnecting... 2/5") are worth showing, but they do not end the conversation.
      return data.fatal ? [] : [{ type: 'diagnostic.warning', data: { code: 'ENGINE_NONFATAL_ERROR', message: data.message, level: 'warning' } }];
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
      const failure = judgement.failure ?? { category: 'unknown', code: 'ENGINE_TURN_FAILED', message: judgement.reason };
      return { type: 'conversation.failed', data: { ...failure } };
    }
    default:
      return {
        type: 'conversation.failed',
        data: { category: 'unknown', code: 'ATTEMPT_STATE_UNKNOWN', message: `the attempt has no exit event (${judgement.reason})` },
      };
  }
}
