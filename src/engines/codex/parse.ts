/**
 * Parser of `codex exec --json` output: NDJSON on stdout, one `ThreadEvent` per line (upstream
 * `codex-rs/exec/src/exec_events.rs`: thread.started, turn.started, turn.completed{usage},
 * turn.failed{error}, item.started/updated/completed{item}, top-level error). Observed on codex CLI 0.169.0
 * (`@openai/codex`); samples recorded against the local mock model, shared/research/samples/codex-turn1 and
 * codex-turn2-resume (copied to fixtures/streams/codex/).
 *
 * Upstream facts this relies on:
 * - item ids restart at `item_0` in every turn, so ids are suffixed with the turn index (`item_1#1`);
 * - `error` events and `error` items ("Reconnecting... 2/5") are retries, not failures: only `turn.failed`
 *   ends a turn as failed;
 * - stderr carries tracing logs and the "Reading additional input from stdin" notice; only lines that look
 *   like errors are worth a diagnostic. Under a pty both streams arrive merged as `pty`.
 */
import type { ParsedEvent, StreamName, Usage } from '../../protocol/index.js';
import type { EngineParser, ParserOutput } from '../engine.js';
import { mcpNotReadyDiagnostic } from '../mcp-readiness.js';
import { diag, excerpt, isObject, str, int, count, type Json, stripPtyEcho, parseEventLine } from '../parse-helpers.js';

const STDERR_ERROR = /\bERROR\b|Error:/;
/** codex 0.169's stderr when a `required` MCP server did not start in time: the server's name and the reason. */
const MCP_REQUIRED_FAILED = /required MCP servers failed to initialize: ([A-Za-z0-9_-]+): (.*)$/;

/**
 * The parser's ids (tool calls, messages) end with their turn (`item_1#3`), items before the first turn sharing
 * turn 1's: an id seen before the n-th turn (n ≥ 2) never comes again (`EngineAdapter.turnScopedIds`).
 */
export const CODEX_TURN_SCOPED_IDS = true;

/** What a codex parser remembers between lines. */
interface CodexParseState {
  /** Turns started so far (ids end with it). */
  turnIndex: number;
  /** A turn started and has not yet completed or failed. */
  turnOpen: boolean;
  /** Tool call ids already reported in this turn. */
  calls: Set<string>;
  /** MCP servers already reported not ready (codex says so on two stderr lines). */
  mcpNotReady: Set<string>;
}

/** A fresh parser for one codex attempt. Never throws. */
export function createCodexParser(): EngineParser {
  const state: CodexParseState = { turnIndex: 0, turnOpen: false, calls: new Set(), mcpNotReady: new Set() };
  // One handler for every line (a closure made per line is garbage the collector sweeps per line).
  const onEvent = (event: Json, text: string): ParserOutput[] => onCodexEvent(state, event, text);
  return {
    line: (stream, rawText) => readCodexLine(state, onEvent, stream, rawText),
    end: () => endCodexStream(state),
  };
}

/** One line of any stream; reads `state` through the handlers below. */
function readCodexLine(
  state: CodexParseState,
  onEvent: EventHandler,
  stream: StreamName,
  rawText: string,
): ParserOutput[] {
  // The common case first: a stdout line is one event, with no noise to strip.
  if (stream === 'stdout') return parseEventLine(rawText, WHAT, onEvent);
  const { text, noise } = stream === 'pty' ? stripPtyEcho(rawText) : { text: rawText, noise: null };
  const prefix: ParserOutput[] = noise ? [noise] : [];
  if (stream === 'stderr' || (stream === 'pty' && !text.trimStart().startsWith('{'))) {
    return readCodexStderrLine(state, text);
  }
  return [...prefix, ...parseEventLine(text, WHAT, onEvent)];
}

/** A stderr line: an error-looking line is a diagnostic; a required MCP server's failure adds to `mcpNotReady`. */
function readCodexStderrLine(state: CodexParseState, text: string): ParserOutput[] {
  const out: ParserOutput[] = STDERR_ERROR.test(text) ? [diag('ENGINE_STDERR', excerpt(text), 'info')] : [];
  // A declared server is `required` (agent-options.ts): codex waits for it and ends when it is not ready.
  const notReady = MCP_REQUIRED_FAILED.exec(text);
  if (notReady && !state.mcpNotReady.has(notReady[1]!)) {
    state.mcpNotReady.add(notReady[1]!);
    out.push({ type: 'diagnostic', diagnostic: mcpNotReadyDiagnostic(notReady[1]!, excerpt(notReady[2]!)) });
  }
  return out;
}

/** What a stdout line should be, for the STREAM_PARSE_ERROR of one that is not. */
const WHAT = 'a codex event object';

/** {@link onCodexEvent} bound to one parser's state. */
type EventHandler = (event: Json, text: string) => ParserOutput[];

/** The stream's end: a turn still open (`turnOpen`) is a diagnostic. */
function endCodexStream(state: CodexParseState): ParserOutput[] {
  return state.turnOpen
    ? [
        diag(
          'CODEX_TURN_NOT_ENDED',
          `turn ${state.turnIndex} started but the stream ended without turn.completed or turn.failed`,
        ),
      ]
    : [];
}

/** One thread event; turn events change `turnIndex`, `turnOpen` and `calls`, item events go to {@link onCodexItem}. */
function onCodexEvent(state: CodexParseState, event: Json, text: string): ParserOutput[] {
  switch (event.type) {
    case 'thread.started': {
      const id = str(event.thread_id);
      return id
        ? [{ type: 'engine.session', session_id: id }]
        : [diag('STREAM_PARSE_ERROR', `thread.started without thread_id: ${excerpt(text)}`)];
    }
    case 'turn.started':
      state.turnIndex += 1;
      state.turnOpen = true;
      // Ids end with their turn (`itemId`), and items before the first turn share turn 1's: from turn 2 on, no id
      // seen so far can come again, so they are forgotten (a long stream keeps no ids of finished turns).
      if (state.turnIndex >= 2) state.calls.clear();
      return [{ type: 'engine.turn.started' }];
    case 'turn.completed':
      state.turnOpen = false;
      return [
        { type: 'engine.usage', usage: usage(event.usage) },
        { type: 'engine.turn.end', status: 'completed', error: null },
      ];
    case 'turn.failed': {
      state.turnOpen = false;
      const error = isObject(event.error) ? str(event.error.message) : str(event.error);
      return [{ type: 'engine.turn.end', status: 'failed', error: error ?? 'turn failed without a message' }];
    }
    case 'error':
      return [{ type: 'engine.error', message: str(event.message) ?? excerpt(text), fatal: false }];
    case 'item.started':
    case 'item.updated':
    case 'item.completed':
      if (!isObject(event.item))
        return [diag('STREAM_PARSE_ERROR', `${event.type} without an item object: ${excerpt(text)}`)];
      return onCodexItem(state, event.type.slice(5) as 'started' | 'updated' | 'completed', event.item);
    default:
      return [
        diag('CODEX_UNKNOWN_EVENT', `unknown codex event type ${JSON.stringify(event.type)}: ${excerpt(text)}`, 'info'),
      ];
  }
}

/** An item's id with its turn (reads `turnIndex`). */
function itemId(state: CodexParseState, item: Json): string {
  return `${str(item.id) ?? 'item'}#${Math.max(state.turnIndex, 1)}`;
}

/** The call event the first time `id` is seen (adds it to `calls`), nothing after. */
function toolCall(state: CodexParseState, id: string, kind: ToolKind, name: string, input: unknown): ParsedEvent[] {
  if (state.calls.has(id)) return [];
  state.calls.add(id);
  return [{ type: 'engine.tool.call', call_id: id, kind, name, input }];
}

/** One item event; reads `turnIndex` and `calls` (through {@link toolCall}). */
function onCodexItem(state: CodexParseState, phase: 'started' | 'updated' | 'completed', item: Json): ParserOutput[] {
  const id = itemId(state, item);
  const done = phase === 'completed';
  switch (item.type) {
    case 'agent_message':
      // exec emits agent messages whole, on completion only.
      return done
        ? [{ type: 'engine.assistant.message', message_id: id, text: str(item.text) ?? '', final: true }]
        : [];
    case 'reasoning':
      return done ? [{ type: 'engine.reasoning', item_id: id, text: str(item.text) ?? '' }] : [];
    case 'command_execution': {
      const out = toolCall(state, id, 'shell', 'command_execution', { command: str(item.command) ?? '' });
      if (done) out.push(result(id, item, str(item.aggregated_output), int(item.exit_code)));
      return out;
    }
    case 'file_change': {
      const changes = fileChanges(item.changes);
      const out = toolCall(state, id, 'file_change', 'file_change', { changes });
      if (done) out.push({ type: 'engine.file.change', changes }, result(id, item, null, null));
      return out;
    }
    case 'mcp_tool_call': {
      const server = str(item.server) ?? '';
      const tool = str(item.tool) ?? '';
      const out = toolCall(state, id, 'mcp', `${server}.${tool}`, { server, tool, arguments: item.arguments ?? null });
      if (done) out.push(result(id, item, mcpOutput(item), null));
      return out;
    }
    case 'web_search': {
      const out = toolCall(state, id, 'web_search', 'web_search', { query: str(item.query) ?? '' });
      if (done) out.push(result(id, item, null, null));
      return out;
    }
    case 'error':
      return done ? [{ type: 'engine.error', message: str(item.message) ?? '', fatal: false }] : [];
    case 'todo_list':
      // The agent's plan: no conversation or tool fact to record.
      return [];
    default:
      return [
        diag('CODEX_UNKNOWN_EVENT', `unknown codex item type ${JSON.stringify(item.type)} in item.${phase}`, 'info'),
      ];
  }
}

type ToolKind = Extract<ParsedEvent, { type: 'engine.tool.call' }>['kind'];
type ToolStatus = Extract<ParsedEvent, { type: 'engine.tool.result' }>['status'];

function result(callId: string, item: Json, output: string | null, exitCode: number | null): ParsedEvent {
  return { type: 'engine.tool.result', call_id: callId, status: toolStatus(item.status), output, exit_code: exitCode };
}

function toolStatus(value: unknown): ToolStatus {
  return value === 'failed' || value === 'declined' || value === 'in_progress' ? value : 'completed';
}

function fileChanges(value: unknown): Array<{ path: string; kind: string }> {
  if (!Array.isArray(value)) return [];
  return value.filter(isObject).map((change) => ({ path: str(change.path) ?? '', kind: str(change.kind) ?? 'update' }));
}

/** MCP results carry `content` blocks; the text blocks are the useful output. */
function mcpOutput(item: Json): string | null {
  if (isObject(item.error)) return str(item.error.message);
  if (!isObject(item.result) || !Array.isArray(item.result.content)) return null;
  const texts = item.result.content
    .filter(isObject)
    .map((block) => str(block.text))
    .filter((t): t is string => t !== null);
  return texts.length > 0 ? texts.join('\n') : JSON.stringify(item.result.content);
}

function usage(value: unknown): Usage {
  const u = isObject(value) ? value : {};
  return {
    input_tokens: count(u.input_tokens),
    output_tokens: count(u.output_tokens),
    cached_input_tokens: count(u.cached_input_tokens),
    reasoning_output_tokens: count(u.reasoning_output_tokens),
  };
}
