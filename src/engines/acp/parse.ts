/**
 * The parser of an engine's stdout over ACP (a provider's `transport: 'acp'`): JSON-RPC lines from the agent, the
 * same for every engine. The harness's own requests are in `.audit/acp-client.N.jsonl`; what the agent answers is
 * enough here, since the client sends `initialize`, then `session/new` or `session/load`, then one `session/prompt`:
 *
 * - the first response answers `initialize`; the second opens the session (`session/new` → `engine.session` from its
 *   `sessionId`); `session/update`s before it replay an older session (`session/load`) and are skipped, and so are
 *   those of a loaded session up to the stdout line the client sent its prompt after ({@link AcpParser.promptSentAfterLine},
 *   or `promptAfterLine` from the client's file; held until it is known); after that the turn runs
 *   (`engine.turn.started`), and an update's `sessionId` is the session when `session/new` gave none;
 * - `session/update`: `agent_message_chunk` → assistant deltas, one whole message when something else comes (an
 *   empty chunk is nothing; one that starts a message while a tool call runs and matches the engine's `acpNotice` is an
 *   `ACP_ENGINE_NOTICE` diagnostic);
 *   `agent_thought_chunk` → `engine.reasoning` (one per run of chunks); `tool_call` → `engine.tool.call` (its kind
 *   from the ACP kind, its name from `_meta`'s `toolName`, the `toolCallId`'s prefix or the title, its input
 *   `rawInput` else the title and locations), and a result when it comes finished; `tool_call_update` with
 *   `completed`/`failed` → `engine.tool.result` (text content as the output); `plan` → an `ACP_PLAN` diagnostic;
 * - the response with a `stopReason` ends the turn: `end_turn` completed, `cancelled` failed (`cancelled`), others
 *   failed with the reason; its `usage` is `engine.usage`;
 * - an error response is `engine.error` (fatal), and ends the turn failed once the session was opened;
 * - `session/request_permission` announces its tool call (when not seen yet) and is an `ACP_PERMISSION_REQUESTED`
 *   diagnostic (the answer is in the client's file); a call without a result when the prompt answers gets one:
 *   `declined` after `end_turn` (its permission was rejected), else `failed`.
 *
 * Never throws; a line that is not JSON-RPC is an `ACP_STDOUT_NOISE` diagnostic.
 */
import type { ParsedEvent, StreamName, Usage } from '../../protocol/index.js';
import type { EngineParser, ParserOutput } from '../engine.js';
import { diag, excerpt, isObject, str, type Json } from '../parse-helpers.js';

type ToolKind = Extract<ParsedEvent, { type: 'engine.tool.call' }>['kind'];

/** The RASP kind of an ACP tool kind. */
export function acpToolKind(kind: unknown): ToolKind {
  if (kind === 'execute') return 'shell';
  if (kind === 'edit' || kind === 'delete' || kind === 'move') return 'file_change';
  if (kind === 'fetch') return 'web_search';
  return 'other';
}

/** The tool names an ACP `_meta` gives: its `toolName`, then those one level down. */
export function metaToolNames(meta: unknown): string[] {
  if (!isObject(meta)) return [];
  const names = typeof meta.toolName === 'string' ? [meta.toolName] : [];
  for (const value of Object.values(meta))
    if (isObject(value) && typeof value.toolName === 'string') names.push(value.toolName);
  return names;
}

/** The name of an ACP tool call: `_meta`'s `toolName` (top or one level down), the id's prefix, else its title. */
export function acpToolName(update: Json): string {
  return metaToolNames(update._meta)[0] ?? toolIdPrefix(str(update.toolCallId)) ?? str(update.title) ?? 'unknown';
}

/**
 * The tool name a call id starts with, where the engine builds ids so: gemini's `write_file__write_file_<time>_<n>`
 * (a call the model made) and `<name>-<time>-<n>` (one it made itself); else null.
 */
export function toolIdPrefix(id: string | null | undefined): string | null {
  if (!id) return null;
  const match = /^([A-Za-z][\w.]*?)__/.exec(id) ?? /^(.+?)-\d+-\d+$/.exec(id);
  return match ? match[1]! : null;
}

/** The ACP parser: an {@link EngineParser} that can be told where the prompt was sent. */
export interface AcpParser extends EngineParser {
  /**
   * The client sent `session/prompt` once it had `lines` stdout lines: in a loaded session, the updates on those lines
   * replay its history and are skipped, the later ones are the turn's. Until then they are held (the first call wins).
   */
  promptSentAfterLine(lines: number): void;
}

/** What a recorded attempt says of its prompt (its `_meta.agentHarness.afterStdoutLine`, in the client's file). */
export interface AcpParserOptions {
  promptAfterLine?: number | null;
  /** The engine's notices among its message chunks (`EngineAdapter.acpNotice`). */
  notice?: RegExp;
}

/** What an ACP parser remembers between lines. */
interface AcpParseState {
  /** JSON-RPC responses seen (the first answers `initialize`, the second opens the session). */
  responses: number;
  /** The session is open: updates are the turn's (or a loaded session's replay). */
  live: boolean;
  /** Stdout lines seen. */
  lineNo: number;
  /** The session came from `session/load` (or `session/resume`): its history may be replayed. */
  loaded: boolean;
  /** The stdout line the prompt was sent after, once known. */
  promptLine: number | null;
  /** A loaded session's updates held until `promptLine` is known. */
  held: Array<{ line: number; params: Json }>;
  /** The session id reported (the first one only). */
  sessionId: string | null;
  /** A turn started and the prompt's answer has not come yet. */
  turnOpen: boolean;
  /** Assistant messages closed so far (ids are `msg_<n + 1>`). */
  messageIndex: number;
  /** The streamed assistant message's text so far, or null outside one. */
  pending: string | null;
  /** The streamed thought's text so far, or null outside one. */
  thought: string | null;
  /** Tool calls by id, and whether their result came. */
  calls: Map<string, { finished: boolean }>;
  /** The engine's notices among its message chunks (see {@link AcpParserOptions.notice}). */
  notice: RegExp | undefined;
}

/** A fresh parser of one ACP attempt's stdout. */
export function createAcpParser(options: AcpParserOptions = {}): AcpParser {
  const state: AcpParseState = {
    responses: 0,
    live: false,
    lineNo: 0,
    loaded: false,
    promptLine: options.promptAfterLine ?? null,
    held: [],
    sessionId: null,
    turnOpen: false,
    messageIndex: 0,
    pending: null,
    thought: null,
    calls: new Map(),
    notice: options.notice,
  };
  return {
    promptSentAfterLine(lines: number): void {
      state.promptLine ??= lines;
    },
    line: (stream, text) => readAcpLine(state, stream, text),
    end: () => endAcpStream(state),
  };
}

/** One line: stdout only; counts `lineNo` and releases held updates once `promptLine` is known. */
function readAcpLine(state: AcpParseState, stream: StreamName, text: string): ParserOutput[] {
  if (stream !== 'stdout') return [];
  state.lineNo += 1;
  const released = releaseHeld(state, false);
  const parsed = parseAcpMessage(state, text);
  return released.length > 0 ? [...released, ...parsed] : parsed;
}

/** The stream's end: held updates released, the open message closed, a turn still open a diagnostic. */
function endAcpStream(state: AcpParseState): ParserOutput[] {
  const out = [...releaseHeld(state, true), ...flushMessage(state)];
  if (state.turnOpen) out.push(diag('ACP_TURN_NOT_ENDED', 'the engine stopped before its session/prompt answered'));
  return out;
}

/** Closes the streamed thought (`thought`) and message (`pending`, then `messageIndex`). */
function flushMessage(state: AcpParseState): ParserOutput[] {
  const out: ParserOutput[] = [];
  if (state.thought !== null) {
    out.push({ type: 'engine.reasoning', item_id: null, text: state.thought });
    state.thought = null;
  }
  if (state.pending !== null) {
    out.push({
      type: 'engine.assistant.message',
      message_id: `msg_${state.messageIndex + 1}`,
      text: state.pending,
      final: true,
    });
    state.messageIndex += 1;
    state.pending = null;
  }
  return out;
}

/** The session event for the first session id (sets `sessionId`). */
function reportSession(state: AcpParseState, id: unknown): ParserOutput[] {
  if (typeof id !== 'string' || id === '' || state.sessionId !== null) return [];
  state.sessionId = id;
  return [{ type: 'engine.session', session_id: id }];
}

/** A turn started, unless one is open (sets `turnOpen`). */
function openTurn(state: AcpParseState): ParserOutput[] {
  if (state.turnOpen) return [];
  state.turnOpen = true;
  return [{ type: 'engine.turn.started' }];
}

/** A tool call's result (marks it finished in `calls`), with the files its diffs changed. */
function toolResult(state: AcpParseState, id: string, update: Json): ParserOutput[] {
  const call = state.calls.get(id);
  if (call) call.finished = true;
  const changes =
    update.status === 'completed' && Array.isArray(update.content)
      ? update.content
          .filter((c): c is Json => isObject(c) && c.type === 'diff' && typeof c.path === 'string')
          .map((c) => ({
            path: c.path as string,
            kind: isObject(c._meta) && c._meta.kind === 'add' ? 'add' : c.oldText ? 'update' : 'add',
          }))
      : [];
  return [
    {
      type: 'engine.tool.result',
      call_id: id,
      status: update.status === 'failed' ? 'failed' : 'completed',
      output: contentText(update.content) ?? outputText(update.rawOutput),
      exit_code: null,
    },
    ...(changes.length > 0 ? [{ type: 'engine.file.change' as const, changes }] : []),
  ];
}

/** A tool call (added to `calls`; closes the open message), and its result when it comes finished. */
function toolCall(state: AcpParseState, update: Json): ParserOutput[] {
  const id = str(update.toolCallId) ?? `tool_${state.calls.size + 1}`;
  state.calls.set(id, { finished: false });
  const input =
    update.rawInput !== undefined
      ? update.rawInput
      : { title: str(update.title), ...(Array.isArray(update.locations) ? { locations: update.locations } : {}) };
  const out: ParserOutput[] = [
    ...flushMessage(state),
    { type: 'engine.tool.call', call_id: id, kind: acpToolKind(update.kind), name: acpToolName(update), input },
  ];
  if (update.status === 'completed' || update.status === 'failed') out.push(...toolResult(state, id, update));
  return out;
}

/** A `session/update` of the turn: the session and turn first, then by kind (`pending`, `thought`, `calls`). */
function onAcpUpdate(state: AcpParseState, params: Json): ParserOutput[] {
  const out: ParserOutput[] = [...reportSession(state, params.sessionId), ...openTurn(state)];
  const update = isObject(params.update) ? params.update : {};
  switch (update.sessionUpdate) {
    case 'agent_message_chunk': {
      const text = chunkText(update.content);
      // An empty chunk carries no words (qwen 0.24.4 sends one with its usage after each model call).
      if (text === '') return out;
      // The model does not speak while its tool runs: a matching chunk then is the engine's.
      if (
        state.pending === null &&
        state.notice?.test(text) &&
        [...state.calls.values()].some((call) => !call.finished)
      )
        return [...out, ...flushMessage(state), diag('ACP_ENGINE_NOTICE', `the engine said: ${excerpt(text)}`, 'info')];
      if (state.thought !== null) {
        out.push({ type: 'engine.reasoning', item_id: null, text: state.thought });
        state.thought = null;
      }
      state.pending = (state.pending ?? '') + text;
      out.push({ type: 'engine.assistant.message', message_id: `msg_${state.messageIndex + 1}`, text, final: false });
      return out;
    }
    case 'agent_thought_chunk': {
      if (state.pending !== null) out.push(...flushMessage(state));
      state.thought = (state.thought ?? '') + chunkText(update.content);
      return out;
    }
    case 'tool_call':
      return [...out, ...toolCall(state, update)];
    case 'tool_call_update': {
      const id = str(update.toolCallId);
      if (!id || (update.status !== 'completed' && update.status !== 'failed')) return out;
      const call = state.calls.get(id);
      if (call?.finished) return out;
      if (!call) out.push(...toolCall(state, { ...update, status: undefined }));
      return [...out, ...flushMessage(state), ...toolResult(state, id, update)];
    }
    case 'plan': {
      const entries = Array.isArray(update.entries) ? update.entries.filter(isObject) : [];
      const text = entries.map((e) => `[${str(e.status) ?? '?'}] ${str(e.content) ?? ''}`).join('; ');
      return [...out, diag('ACP_PLAN', `plan: ${excerpt(text)}`, 'info')];
    }
    default:
      return out;
  }
}

/** The `held` updates after `promptLine` (all of them when it is not known: `force`); the rest is dropped. */
function releaseHeld(state: AcpParseState, force: boolean): ParserOutput[] {
  if (state.held.length === 0 || (state.promptLine === null && !force)) return [];
  const out: ParserOutput[] = [];
  for (const { line, params } of state.held.splice(0))
    if (state.promptLine === null || line > state.promptLine) out.push(...onAcpUpdate(state, params));
  return out;
}

/** A JSON-RPC response (counted in `responses`): an error, the prompt's answer, or the session opened. */
function onAcpResponse(state: AcpParseState, message: Json): ParserOutput[] {
  state.responses += 1;
  if (isObject(message.error)) return onAcpErrorResponse(state, message.error);
  const result = isObject(message.result) ? message.result : {};
  if (typeof result.stopReason === 'string') return onPromptAnswered(state, result, result.stopReason);
  if (state.responses === 2 || typeof result.sessionId === 'string') {
    state.live = true;
    state.loaded = typeof result.sessionId !== 'string';
    return reportSession(state, result.sessionId);
  }
  return [];
}

/** An error response: a fatal engine error, which fails the turn once the session was opened (sets `live`). */
function onAcpErrorResponse(state: AcpParseState, error: Json): ParserOutput[] {
  const text = `${str(error.message) ?? 'error'} (JSON-RPC ${typeof error.code === 'number' ? error.code : '?'})${error.data !== undefined ? `: ${excerpt(JSON.stringify(error.data))}` : ''}`;
  const out: ParserOutput[] = [...flushMessage(state), { type: 'engine.error', message: text, fatal: true }];
  if (state.responses >= 2) {
    out.push(...openTurn(state), { type: 'engine.turn.end', status: 'failed', error: text });
    state.turnOpen = false;
  }
  state.live = true;
  return out;
}

/** The prompt's answer (`stopReason`): the turn's end, with a result for each call that never finished. */
function onPromptAnswered(state: AcpParseState, result: Json, stopReason: string): ParserOutput[] {
  const out: ParserOutput[] = [...releaseHeld(state, true), ...openTurn(state), ...flushMessage(state)];
  // A call that never finished was rejected (its permission) or cut off by the cancel.
  for (const [id, call] of state.calls) {
    if (call.finished) continue;
    call.finished = true;
    out.push({
      type: 'engine.tool.result',
      call_id: id,
      status: stopReason === 'end_turn' ? 'declined' : 'failed',
      output: null,
      exit_code: null,
    });
  }
  const usage = promptUsage(result.usage);
  if (usage) out.push({ type: 'engine.usage', usage });
  out.push(
    stopReason === 'end_turn'
      ? { type: 'engine.turn.end', status: 'completed', error: null }
      : { type: 'engine.turn.end', status: 'failed', error: stopReason },
  );
  state.turnOpen = false;
  return out;
}

/** A stdout line as JSON-RPC: a notification or request from the agent, or a response. */
function parseAcpMessage(state: AcpParseState, text: string): ParserOutput[] {
  if (text.trim() === '') return [];
  let message: unknown;
  try {
    message = JSON.parse(text);
  } catch {
    return [diag('ACP_STDOUT_NOISE', `stdout line that is not JSON-RPC: ${excerpt(text)}`, 'warning')];
  }
  if (!isObject(message)) return [diag('ACP_STDOUT_NOISE', `stdout line that is not JSON-RPC: ${excerpt(text)}`)];
  if (typeof message.method === 'string') {
    const params = isObject(message.params) ? message.params : {};
    if (message.method === 'session/update') return onSessionUpdate(state, params);
    if (message.method === 'session/request_permission') return onPermissionRequest(state, params);
    return [];
  }
  if ('id' in message && ('result' in message || 'error' in message)) return onAcpResponse(state, message);
  return [diag('ACP_STDOUT_NOISE', `stdout line that is not JSON-RPC: ${excerpt(text)}`)];
}

/**
 * A `session/update` notification: before the session is open (`live`) only its session id; in a loaded session,
 * history replay until `promptLine` (held while it is not known).
 */
function onSessionUpdate(state: AcpParseState, params: Json): ParserOutput[] {
  if (!state.live) return reportSession(state, params.sessionId);
  if (!state.loaded) return onAcpUpdate(state, params);
  // A loaded session: history replay until the prompt's line.
  if (state.promptLine === null) {
    state.held.push({ line: state.lineNo, params });
    return reportSession(state, params.sessionId);
  }
  return state.lineNo > state.promptLine ? onAcpUpdate(state, params) : reportSession(state, params.sessionId);
}

/** A `session/request_permission`: announces its tool call when not seen yet (`calls`), and a diagnostic. */
function onPermissionRequest(state: AcpParseState, params: Json): ParserOutput[] {
  const call = isObject(params.toolCall) ? params.toolCall : {};
  // The request announces the call (gemini reports a call it asks for only once it finished).
  const id = str(call.toolCallId);
  return [
    ...(id && !state.calls.has(id) ? toolCall(state, { ...call, status: 'pending' }) : []),
    diag(
      'ACP_PERMISSION_REQUESTED',
      `the engine asked permission for ${acpToolName(call)} (${str(call.kind) ?? 'other'}): ${excerpt(str(call.title) ?? '')}`,
      'info',
    ),
  ];
}

function chunkText(content: unknown): string {
  if (!isObject(content)) return '';
  return content.type === 'text' && typeof content.text === 'string' ? content.text : '';
}

/** The text of a tool call's content: its text blocks and diffs (path and new text), or null when it has none. */
function contentText(content: unknown): string | null {
  if (!Array.isArray(content)) return null;
  const parts: string[] = [];
  for (const item of content) {
    if (!isObject(item)) continue;
    if (item.type === 'content' && isObject(item.content) && typeof item.content.text === 'string')
      parts.push(item.content.text);
    else if (item.type === 'diff' && typeof item.path === 'string')
      parts.push(`${item.path}\n${str(item.newText) ?? ''}`);
  }
  return parts.length > 0 ? parts.join('\n') : null;
}

function outputText(raw: unknown): string | null {
  if (raw === undefined || raw === null) return null;
  return typeof raw === 'string' ? raw : JSON.stringify(raw);
}

function promptUsage(raw: unknown): Usage | null {
  if (!isObject(raw)) return null;
  const num = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);
  return {
    input_tokens: num(raw.inputTokens),
    output_tokens: num(raw.outputTokens),
    cached_input_tokens: num(raw.cachedReadTokens),
  } as Usage;
}
