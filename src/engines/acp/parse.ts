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

/** A fresh parser of one ACP attempt's stdout. */
export function createAcpParser(options: AcpParserOptions = {}): AcpParser {
  let responses = 0;
  let live = false;
  let lineNo = 0;
  /** The session came from `session/load` (or `session/resume`): its history may be replayed. */
  let loaded = false;
  let promptLine: number | null = options.promptAfterLine ?? null;
  const held: Array<{ line: number; params: Json }> = [];
  let sessionId: string | null = null;
  let turnOpen = false;
  let messageIndex = 0;
  let pending: string | null = null;
  let thought: string | null = null;
  const calls = new Map<string, { finished: boolean }>();

  function flush(): ParserOutput[] {
    const out: ParserOutput[] = [];
    if (thought !== null) {
      out.push({ type: 'engine.reasoning', item_id: null, text: thought });
      thought = null;
    }
    if (pending !== null) {
      out.push({ type: 'engine.assistant.message', message_id: `msg_${messageIndex + 1}`, text: pending, final: true });
      messageIndex += 1;
      pending = null;
    }
    return out;
  }

  function session(id: unknown): ParserOutput[] {
    if (typeof id !== 'string' || id === '' || sessionId !== null) return [];
    sessionId = id;
    return [{ type: 'engine.session', session_id: id }];
  }

  function openTurn(): ParserOutput[] {
    if (turnOpen) return [];
    turnOpen = true;
    return [{ type: 'engine.turn.started' }];
  }

  function toolResult(id: string, update: Json): ParserOutput[] {
    const call = calls.get(id);
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

  function toolCall(update: Json): ParserOutput[] {
    const id = str(update.toolCallId) ?? `tool_${calls.size + 1}`;
    calls.set(id, { finished: false });
    const input =
      update.rawInput !== undefined
        ? update.rawInput
        : { title: str(update.title), ...(Array.isArray(update.locations) ? { locations: update.locations } : {}) };
    const out: ParserOutput[] = [
      ...flush(),
      { type: 'engine.tool.call', call_id: id, kind: acpToolKind(update.kind), name: acpToolName(update), input },
    ];
    if (update.status === 'completed' || update.status === 'failed') out.push(...toolResult(id, update));
    return out;
  }

  function onUpdate(params: Json): ParserOutput[] {
    const out: ParserOutput[] = [...session(params.sessionId), ...openTurn()];
    const update = isObject(params.update) ? params.update : {};
    switch (update.sessionUpdate) {
      case 'agent_message_chunk': {
        const text = chunkText(update.content);
        // An empty chunk carries no words (qwen 0.24.4 sends one with its usage after each model call).
        if (text === '') return out;
        // The model does not speak while its tool runs: a matching chunk then is the engine's.
        if (pending === null && options.notice?.test(text) && [...calls.values()].some((c) => !c.finished)) {
          return [...out, ...flush(), diag('ACP_ENGINE_NOTICE', `the engine said: ${excerpt(text)}`, 'info')];
        }
        if (thought !== null) {
          out.push({ type: 'engine.reasoning', item_id: null, text: thought });
          thought = null;
        }
        pending = (pending ?? '') + text;
        out.push({ type: 'engine.assistant.message', message_id: `msg_${messageIndex + 1}`, text, final: false });
        return out;
      }
      case 'agent_thought_chunk': {
        if (pending !== null) out.push(...flush());
        thought = (thought ?? '') + chunkText(update.content);
        return out;
      }
      case 'tool_call':
        return [...out, ...toolCall(update)];
      case 'tool_call_update': {
        const id = str(update.toolCallId);
        if (!id || (update.status !== 'completed' && update.status !== 'failed')) return out;
        const call = calls.get(id);
        if (call?.finished) return out;
        if (!call) out.push(...toolCall({ ...update, status: undefined }));
        return [...out, ...flush(), ...toolResult(id, update)];
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

  /** The held updates after the prompt's line (all of them when it is not known: `force`); the rest is dropped. */
  function release(force: boolean): ParserOutput[] {
    if (held.length === 0 || (promptLine === null && !force)) return [];
    const out: ParserOutput[] = [];
    for (const { line, params } of held.splice(0))
      if (promptLine === null || line > promptLine) out.push(...onUpdate(params));
    return out;
  }

  function onResponse(message: Json): ParserOutput[] {
    responses += 1;
    if (isObject(message.error)) {
      const error = message.error;
      const text = `${str(error.message) ?? 'error'} (JSON-RPC ${typeof error.code === 'number' ? error.code : '?'})${error.data !== undefined ? `: ${excerpt(JSON.stringify(error.data))}` : ''}`;
      const out: ParserOutput[] = [...flush(), { type: 'engine.error', message: text, fatal: true }];
      if (responses >= 2) {
        out.push(...openTurn(), { type: 'engine.turn.end', status: 'failed', error: text });
        turnOpen = false;
      }
      live = true;
      return out;
    }
    const result = isObject(message.result) ? message.result : {};
    if (typeof result.stopReason === 'string') {
      const out: ParserOutput[] = [...release(true), ...openTurn(), ...flush()];
      // A call that never finished was rejected (its permission) or cut off by the cancel.
      for (const [id, call] of calls) {
        if (call.finished) continue;
        call.finished = true;
        out.push({
          type: 'engine.tool.result',
          call_id: id,
          status: result.stopReason === 'end_turn' ? 'declined' : 'failed',
          output: null,
          exit_code: null,
        });
      }
      const usage = promptUsage(result.usage);
      if (usage) out.push({ type: 'engine.usage', usage });
      out.push(
        result.stopReason === 'end_turn'
          ? { type: 'engine.turn.end', status: 'completed', error: null }
          : { type: 'engine.turn.end', status: 'failed', error: result.stopReason },
      );
      turnOpen = false;
      return out;
    }
    if (responses === 2 || typeof result.sessionId === 'string') {
      live = true;
      loaded = typeof result.sessionId !== 'string';
      return session(result.sessionId);
    }
    return [];
  }

  return {
    promptSentAfterLine(lines: number): void {
      promptLine ??= lines;
    },
    line(stream: StreamName, text: string): ParserOutput[] {
      if (stream !== 'stdout') return [];
      lineNo += 1;
      const released = release(false);
      const parsed = parseLine(text);
      return released.length > 0 ? [...released, ...parsed] : parsed;
    },
    end(): ParserOutput[] {
      const out = [...release(true), ...flush()];
      if (turnOpen) out.push(diag('ACP_TURN_NOT_ENDED', 'the engine stopped before its session/prompt answered'));
      return out;
    },
  };

  function parseLine(text: string): ParserOutput[] {
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
      if (message.method === 'session/update') {
        if (!live) return session(params.sessionId);
        if (!loaded) return onUpdate(params);
        // A loaded session: history replay until the prompt's line.
        if (promptLine === null) {
          held.push({ line: lineNo, params });
          return session(params.sessionId);
        }
        return lineNo > promptLine ? onUpdate(params) : session(params.sessionId);
      }
      if (message.method === 'session/request_permission') {
        const call = isObject(params.toolCall) ? params.toolCall : {};
        // The request announces the call (gemini reports a call it asks for only once it finished).
        const id = str(call.toolCallId);
        return [
          ...(id && !calls.has(id) ? toolCall({ ...call, status: 'pending' }) : []),
          diag(
            'ACP_PERMISSION_REQUESTED',
            `the engine asked permission for ${acpToolName(call)} (${str(call.kind) ?? 'other'}): ${excerpt(str(call.title) ?? '')}`,
            'info',
          ),
        ];
      }
      return [];
    }
    if ('id' in message && ('result' in message || 'error' in message)) return onResponse(message);
    return [diag('ACP_STDOUT_NOISE', `stdout line that is not JSON-RPC: ${excerpt(text)}`)];
  }
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
