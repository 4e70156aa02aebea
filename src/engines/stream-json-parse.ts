/**
 * The handlers claude's `stream-json` and qwen's (which prints claude's shape) share: `assistant` content blocks,
 * `user` tool results, a `system/init` opening the turn, a `result` closing it, the stderr and pty lines and the
 * stream's end. Each engine's parse.ts keeps what is its own (claude's synthetic messages and older json, qwen's
 * `[API Error` texts and `Exit Code:` reports) and names it in a {@link StreamJsonDialect}.
 */
import type { ParsedEvent, StreamName, Usage } from '../protocol/index.js';
import type { ParserOutput } from './engine.js';
import { mcpNotReadyDiagnostic } from './mcp-readiness.js';
import { count, diag, excerpt, isObject, str, type Json } from './parse-helpers.js';

/** Normalized kind of a tool call. */
export type ToolKind = Extract<ParsedEvent, { type: 'engine.tool.call' }>['kind'];

/** What a stream-json parser remembers between lines. */
export interface StreamJsonState {
  /** `system/init` (or a first event) opened a turn and no `result` closed it yet. */
  turnOpen: boolean;
  /** The session id last reported (reported again only when it changes). */
  sessionSeen: string | null;
  /** Content blocks seen per `message.id`: block ids are `<message id>#<n>`. */
  blocksPerMessage: Map<string, number>;
  /** Tool calls by id, for their results (name and input). */
  calls: Map<string, { name: string; input: unknown }>;
  /** Whether this turn already produced an assistant text: `result` then adds none of its own. */
  textThisTurn: boolean;
}

/** What differs between the engines that print stream-json. */
export interface StreamJsonDialect {
  /** Code of the info diagnostic for an unknown event, subtype or block (`CLAUDE_UNKNOWN_EVENT`). */
  unknownCode: string;
  /** Code of the diagnostic for a stream that ended with its turn open (`CLAUDE_TURN_NOT_ENDED`). */
  turnNotEndedCode: string;
  /** Lines of stderr (or of a pty, not JSON) worth an ENGINE_STDERR diagnostic. */
  stderrError: RegExp;
  /** Normalized kind of a tool name. */
  toolKind(name: string): ToolKind;
  /** Tools that change a file named by `file_path` or `notebook_path`. */
  fileTools: ReadonlySet<string>;
  /** The file tool that writes a whole file (its change is a `write`, the others' an `edit`). */
  writeTool: string;
  /** Assistant block types accepted with no output. */
  silentBlocks: ReadonlySet<string>;
  /** A text block that reports an error rather than the model's words (becomes `engine.error`). */
  textIsError(text: string): boolean;
  /** Whether a tool result failed, and its exit code, from the call's name, `is_error` and the output. */
  toolOutcome(
    callName: string | undefined,
    isError: boolean,
    output: string | null,
  ): { failed: boolean; exitCode: number | null };
}

/** A fresh state: no turn, no session, no blocks or calls. */
export function newStreamJsonState(): StreamJsonState {
  return { turnOpen: false, sessionSeen: null, blocksPerMessage: new Map(), calls: new Map(), textThisTurn: false };
}

/**
 * One line of any stream: stderr (and a pty's non-JSON line) gives a diagnostic when it looks like an error, the
 * rest goes to `readStdout`. A throw becomes a STREAM_PARSE_ERROR diagnostic.
 */
export function readStreamJsonLine(
  dialect: StreamJsonDialect,
  stream: StreamName,
  text: string,
  readStdout: (text: string) => ParserOutput[],
): ParserOutput[] {
  try {
    if (stream === 'stderr' || (stream === 'pty' && !text.trimStart().startsWith('{')))
      return dialect.stderrError.test(text) ? [diag('ENGINE_STDERR', excerpt(text), 'info')] : [];
    return readStdout(stream === 'pty' ? text.trimStart() : text);
  } catch (error) {
    return [diag('STREAM_PARSE_ERROR', `parser failed on a line: ${(error as Error).message}`)];
  }
}

/** The stream's end: a turn still open (`turnOpen`) is a diagnostic. */
export function endStreamJson(state: StreamJsonState, dialect: StreamJsonDialect): ParserOutput[] {
  return state.turnOpen
    ? [diag(dialect.turnNotEndedCode, 'system/init was seen but the stream ended without a result event')]
    : [];
}

/**
 * An `assistant` event's blocks: text, thinking and tool_use. Counts blocks in `blocksPerMessage`, sets
 * `textThisTurn` on a text, adds new calls to `calls`.
 */
export function readAssistantBlocks(
  state: StreamJsonState,
  dialect: StreamJsonDialect,
  messageId: string,
  content: unknown[],
  text: string,
): ParserOutput[] {
  const out: ParserOutput[] = [];
  for (const block of content) {
    const n = state.blocksPerMessage.get(messageId) ?? 0;
    state.blocksPerMessage.set(messageId, n + 1);
    const blockId = `${messageId}#${n}`;
    if (!isObject(block)) {
      out.push(diag('STREAM_PARSE_ERROR', `assistant content block is not an object: ${excerpt(text)}`));
      continue;
    }
    if (typeof block.type === 'string' && dialect.silentBlocks.has(block.type)) continue;
    switch (block.type) {
      case 'text': {
        const said = str(block.text) ?? '';
        if (dialect.textIsError(said)) {
          out.push({ type: 'engine.error', message: said, fatal: false });
          break;
        }
        state.textThisTurn = true;
        out.push({ type: 'engine.assistant.message', message_id: blockId, text: said, final: true });
        break;
      }
      case 'thinking':
        out.push({ type: 'engine.reasoning', item_id: blockId, text: str(block.thinking) ?? '' });
        break;
      case 'tool_use': {
        const callId = str(block.id) ?? blockId;
        const name = str(block.name) ?? 'unknown';
        if (state.calls.has(callId)) break;
        state.calls.set(callId, { name, input: block.input ?? null });
        out.push({
          type: 'engine.tool.call',
          call_id: callId,
          kind: dialect.toolKind(name),
          name,
          input: block.input ?? null,
        });
        break;
      }
      default:
        out.push(diag(dialect.unknownCode, `unknown assistant content block ${JSON.stringify(block.type)}`, 'info'));
    }
  }
  return out;
}

/** A `user` event: its tool_result blocks (reads `calls`), with the file a file tool changed. */
export function onStreamJsonUser(state: StreamJsonState, dialect: StreamJsonDialect, event: Json): ParserOutput[] {
  const message = isObject(event.message) ? event.message : null;
  // A replayed user prompt (string content) is not a tool fact.
  if (!message || !Array.isArray(message.content)) return [];
  const out: ParserOutput[] = [];
  for (const block of message.content) {
    if (!isObject(block) || block.type !== 'tool_result') continue;
    const callId = str(block.tool_use_id) ?? 'unknown';
    const output = resultText(block.content);
    const call = state.calls.get(callId);
    const { failed, exitCode } = dialect.toolOutcome(call?.name, block.is_error === true, output);
    out.push({
      type: 'engine.tool.result',
      call_id: callId,
      status: failed ? 'failed' : 'completed',
      output,
      exit_code: exitCode,
    });
    if (!failed && call && dialect.fileTools.has(call.name)) {
      const input = isObject(call.input) ? call.input : {};
      const file = str(input.file_path) ?? str(input.notebook_path);
      if (file)
        out.push({
          type: 'engine.file.change',
          changes: [{ path: file, kind: call.name === dialect.writeTool ? 'write' : 'edit' }],
        });
    }
  }
  return out;
}

/**
 * A `system/init` event: the session (`sessionSeen`), the turn opened (`turnOpen`), a diagnostic for each declared
 * MCP server not `connected` (its tools are not offered).
 */
export function onStreamJsonInit(state: StreamJsonState, event: Json, text: string): ParserOutput[] {
  const id = str(event.session_id);
  if (!id) return [diag('STREAM_PARSE_ERROR', `system/init without session_id: ${excerpt(text)}`)];
  const out: ParserOutput[] = [];
  if (state.sessionSeen !== id) out.push({ type: 'engine.session', session_id: id });
  state.sessionSeen = id;
  if (!state.turnOpen) out.push({ type: 'engine.turn.started' });
  state.turnOpen = true;
  // Declared MCP servers are listed with their status: waited for (claude: MCP_CONNECTION_NONBLOCKING=0), each is
  // `connected` by now, or `failed` / `pending` (not ready: its tools are not offered).
  if (Array.isArray(event.mcp_servers))
    for (const server of event.mcp_servers.filter(isObject)) {
      const name = str(server.name);
      const status = str(server.status);
      if (name && status && status !== 'connected')
        out.push({ type: 'diagnostic', diagnostic: mcpNotReadyDiagnostic(name, `status ${status}`) });
    }
  return out;
}

/**
 * A `result` event up to its turn end, which the engine adds: the session (`sessionSeen`), a turn started if none
 * was open, the turn closed (`turnOpen`), the result text as the final message when `sayResult` and the turn said
 * nothing yet (`textThisTurn`, then reset), the usage.
 */
export function closeStreamJsonTurn(state: StreamJsonState, event: Json, sayResult: boolean): ParserOutput[] {
  const out: ParserOutput[] = [];
  const id = str(event.session_id);
  if (id && state.sessionSeen !== id) out.push({ type: 'engine.session', session_id: id });
  if (id) state.sessionSeen = id;
  if (!state.turnOpen) out.push({ type: 'engine.turn.started' });
  state.turnOpen = false;
  const text = str(event.result);
  if (text && !state.textThisTurn && sayResult)
    out.push({ type: 'engine.assistant.message', message_id: `result:${id ?? 'session'}`, text, final: true });
  state.textThisTurn = false;
  out.push({ type: 'engine.usage', usage: streamJsonUsage(event.usage) });
  return out;
}

/** Text of a tool_result `content`: a string, or its text blocks joined. */
function resultText(content: unknown): string | null {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return null;
  const texts = content
    .filter(isObject)
    .map((block) => str(block.text))
    .filter((t): t is string => t !== null);
  return texts.length > 0 ? texts.join('\n') : JSON.stringify(content);
}

/**
 * A stream-json usage: `cache_read_input_tokens` are the cached input tokens (claude's `input_tokens` leave them
 * out, qwen's include them: `EngineAdapter.cacheReportedApart` says which).
 */
function streamJsonUsage(value: unknown): Usage {
  const u = isObject(value) ? value : {};
  return {
    input_tokens: count(u.input_tokens),
    output_tokens: count(u.output_tokens),
    cached_input_tokens: count(u.cache_read_input_tokens),
    reasoning_output_tokens: null,
  };
}
