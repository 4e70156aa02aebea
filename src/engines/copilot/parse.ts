/**
 * Parser of `copilot -p … --output-format json` output: JSONL on stdout, one session event per line,
 * `{type, data, id, timestamp, parentId, ephemeral?}`, closed by one `{type: "result", sessionId, exitCode, usage}`
 * line. Observed on GitHub Copilot CLI 1.0.102 (`@github/copilot`, a Node SEA binary in `@github/copilot-linux-x64`)
 * in offline BYOK mode (`COPILOT_OFFLINE=true`, `COPILOT_PROVIDER_TYPE=openai`) against the scripted model server;
 * samples in fixtures/streams/copilot/ (recorded by hand and by tests/engine/engine-matrix.engine.test.ts). The full
 * list of event types is the package's `schemas/session-events.schema.json`. Upstream facts relied on:
 *
 * - `session.skills_loaded` (`data.skills[] {name, source}`) comes first: `source: "builtin"` skills ship with the CLI
 *   and are kept out of the offered skills;
 * - `assistant.turn_start` / `assistant.turn_end` bracket one model call (`turnId` 0, 1, …), not a user turn: the
 *   user turn ends with the `result` line (`exitCode` 0 on success, 1 after a `session.error`);
 * - `assistant.message_delta` (`messageId`, `deltaContent`) streams text; `assistant.message` (`content`,
 *   `toolRequests[] {toolCallId, name, arguments}`) is the whole message;
 * - `tool.execution_start` (`toolCallId`, `toolName`, `arguments`) and `tool.execution_complete` (`success`,
 *   `result.content`, `error.message`, `shellExecution.exitCode`) frame each tool call;
 * - `session.error` (`errorType`, `message`, `statusCode`) fails the turn after the CLI's own retries;
 * - the session id is only on the `result` line (and on `session.start` in the session store's `events.jsonl`).
 *
 * stderr is empty in these runs; error-looking lines become ENGINE_STDERR info diagnostics. Never throws.
 */
import type { ParsedEvent, StreamName, Usage } from '../../protocol/index.js';
import type { EngineParser, ParserOutput } from '../engine.js';
import { mcpNotReadyDiagnostic } from '../mcp-readiness.js';
import { count, diag, excerpt, int, isObject, type Json, readJsonlEngineLine, str } from '../parse-helpers.js';

type ToolKind = Extract<ParsedEvent, { type: 'engine.tool.call' }>['kind'];

const STDERR_ERROR = /\bERROR\b|Error:/;
const FILE_TOOLS = new Set(['create', 'edit', 'str_replace_editor', 'apply_patch', 'write']);

/**
 * Event types the parser knows and has nothing to say about: bookkeeping, retries (their outcome is the
 * `session.error` or the answer), streamed tool arguments (the whole call comes with `assistant.message`).
 */
const QUIET = new Set([
  'session.mcp_server_tools_loaded',
  'session.tools_updated',
  'session.custom_agents_updated',
  'session.background_tasks_changed',
  'session.info',
  'session.warning',
  'session.resume',
  'session.model_change',
  'session.title_changed',
  'session.usage_info',
  'session.shutdown',
  'session.usage_record',
  'session.idle',
  'session.extensions_loaded',
  'system.message',
  'system.notification',
  'user.message',
  'assistant.turn_end',
  'assistant.turn_retry',
  'assistant.idle',
  'assistant.message_start',
  'assistant.tool_call_delta',
  'assistant.reasoning_delta',
  'assistant.streaming_delta',
  'assistant.intent',
  'model.call_start',
  'model.call_finished',
  'model.call_failure',
  'model.call_final_result',
  'tool.execution_partial_result',
  'tool.execution_progress',
  'tool.shell_output',
  'skill.invoked',
  'skill.context_delivered',
  'permission.requested',
  'permission.completed',
]);

/** Tool kind of a copilot tool name; MCP tools are offered as `<server>-<tool>` (1.0.102). */
function toolKind(name: string, mcpServers: ReadonlySet<string>): ToolKind {
  if (name === 'bash') return 'shell';
  if (FILE_TOOLS.has(name)) return 'file_change';
  if (name === 'skill') return 'skill';
  if (name === 'web_search' || name === 'web_fetch') return 'web_search';
  const dash = name.indexOf('-');
  if (dash > 0 && mcpServers.has(name.slice(0, dash))) return 'mcp';
  return 'other';
}

/** What a copilot parser remembers between lines. */
interface CopilotParseState {
  /** The session id last reported. */
  session: string | null;
  /** A turn started and its `result` line has not come yet. */
  turnOpen: boolean;
  /** Turns opened so far. */
  turns: number;
  /** The last `session.error` of the open turn: the `result` then fails the turn with it. */
  lastError: string | null;
  /** Tool call ids already reported. */
  calls: Set<string>;
  /** The MCP servers of `session.mcp_servers_loaded`: their tools are `<server>-<tool>`. */
  mcpServers: Set<string>;
}

/** A fresh parser for one copilot attempt. Never throws. */
export function createCopilotParser(): EngineParser {
  const state: CopilotParseState = {
    session: null,
    turnOpen: false,
    turns: 0,
    lastError: null,
    calls: new Set(),
    mcpServers: new Set(),
  };
  return { line: (stream, rawText) => readCopilotLine(state, stream, rawText), end: () => endCopilotStream(state) };
}

/** One line of any stream (see {@link readJsonlEngineLine}). */
function readCopilotLine(state: CopilotParseState, stream: StreamName, rawText: string): ParserOutput[] {
  return readJsonlEngineLine(stream, rawText, STDERR_ERROR, 'a copilot event object', (event, line) =>
    onCopilotEvent(state, event, line),
  );
}

/** The stream's end: a turn still open (`turnOpen`) is a diagnostic. */
function endCopilotStream(state: CopilotParseState): ParserOutput[] {
  return state.turnOpen
    ? [diag('COPILOT_TURN_NOT_ENDED', `turn ${state.turns} started but the stream ended without its result line`)]
    : [];
}

/** The session event when `id` is a new session id (sets `session`). */
function reportSession(state: CopilotParseState, id: string | null): ParsedEvent[] {
  if (!id || id === state.session) return [];
  state.session = id;
  return [{ type: 'engine.session', session_id: id }];
}

/** A turn started, unless one is open (sets `turnOpen`, counts `turns`, clears `lastError`). */
function openTurn(state: CopilotParseState): ParsedEvent[] {
  if (state.turnOpen) return [];
  state.turnOpen = true;
  state.turns += 1;
  state.lastError = null;
  return [{ type: 'engine.turn.started' }];
}

/** One event, by its type (MCP servers, tools, messages and the result have handlers of their own). */
function onCopilotEvent(state: CopilotParseState, event: Json & { type: string }, text: string): ParserOutput[] {
  const data = isObject(event.data) ? event.data : {};
  switch (event.type) {
    case 'session.start':
      return reportSession(state, str(data.sessionId));
    case 'session.skills_loaded':
      return onSkills(data);
    case 'session.mcp_servers_loaded':
      return onMcpServersLoaded(state, data);
    case 'session.mcp_server_status_changed': {
      // `status: "failed"` with the reason (`error`): a declared server that never became ready.
      const name = str(data.serverName);
      return name && data.status === 'failed' ? [mcpNotReady(name, str(data.error) ?? 'failed')] : [];
    }
    case 'assistant.turn_start':
      return openTurn(state);
    case 'assistant.message_delta':
      return [
        ...openTurn(state),
        {
          type: 'engine.assistant.message',
          message_id: str(data.messageId) ?? `message#${state.turns}`,
          text: str(data.deltaContent) ?? '',
          final: false,
        },
      ];
    case 'assistant.message':
      return [...openTurn(state), ...onCopilotMessage(state, data)];
    case 'assistant.reasoning':
      return [
        ...openTurn(state),
        { type: 'engine.reasoning', item_id: str(data.reasoningId), text: str(data.content) ?? '' },
      ];
    case 'assistant.usage':
      return [{ type: 'engine.usage', usage: usage(data) }];
    case 'tool.execution_start':
      return [...openTurn(state), ...onToolCall(state, str(data.toolCallId), str(data.toolName), data.arguments)];
    case 'tool.execution_complete':
      return [...openTurn(state), ...onToolComplete(state, data)];
    case 'session.error': {
      const opened = openTurn(state);
      const message = errorMessage(data) ?? excerpt(text);
      state.lastError = message;
      return [...opened, { type: 'engine.error', message, fatal: true }];
    }
    case 'result':
      return onCopilotResult(state, event);
    default:
      if (QUIET.has(event.type)) return [];
      return [
        diag(
          'COPILOT_UNKNOWN_EVENT',
          `unknown copilot event type ${JSON.stringify(event.type)}: ${excerpt(text)}`,
          'info',
        ),
      ];
  }
}

/** `session.mcp_servers_loaded`: each server goes into `mcpServers`; a failed one is a diagnostic. */
function onMcpServersLoaded(state: CopilotParseState, data: Json): ParserOutput[] {
  return (Array.isArray(data.servers) ? data.servers.filter(isObject) : []).flatMap((server) => {
    const name = str(server.name);
    if (!name) return [];
    state.mcpServers.add(name);
    const status = str(server.status);
    return status === 'failed' ? [mcpNotReady(name, str(server.error) ?? status)] : [];
  });
}

/** The call the first time its id is seen (adds it to `calls`; reads `mcpServers` for its kind), nothing after. */
function onToolCall(state: CopilotParseState, id: string | null, name: string | null, input: unknown): ParserOutput[] {
  const callId = id ?? `tool#${state.calls.size + 1}`;
  if (state.calls.has(callId)) return [];
  state.calls.add(callId);
  const toolName = name ?? 'unknown';
  const kind = toolKind(toolName, state.mcpServers);
  return [
    {
      type: 'engine.tool.call',
      call_id: callId,
      kind,
      name: toolName,
      input: kind === 'shell' && isObject(input) ? { ...input, command: str(input.command) ?? '' } : (input ?? null),
    },
  ];
}

/** `tool.execution_complete`: the call if not seen yet (`calls`), the files it changed, its result. */
function onToolComplete(state: CopilotParseState, data: Json): ParserOutput[] {
  const id = str(data.toolCallId) ?? `tool#${state.calls.size}`;
  const ok = data.success === true;
  const result = isObject(data.result) ? data.result : {};
  const error = isObject(data.error) ? data.error : {};
  const shell = isObject(data.shellExecution) ? data.shellExecution : {};
  const out: ParserOutput[] = [];
  if (!state.calls.has(id)) out.push(...onToolCall(state, id, str(data.toolName), data.arguments));
  // `fileEdits[] {path, kind: create|edit…}` on a file tool's completion (1.0.102).
  const edits = Array.isArray(data.fileEdits) ? data.fileEdits.filter(isObject) : [];
  const changes = edits
    .map((edit) => ({ path: str(edit.path), kind: str(edit.kind) ?? 'update' }))
    .filter((change): change is { path: string; kind: string } => change.path !== null);
  if (ok && changes.length > 0) out.push({ type: 'engine.file.change', changes });
  return [
    ...out,
    {
      type: 'engine.tool.result',
      call_id: id,
      status: ok ? 'completed' : 'failed',
      output: ok ? str(result.content) : (str(error.message) ?? str(result.content)),
      exit_code: int(shell.exitCode),
    },
  ];
}

/** `assistant.message`: its text (id from `turns` when it has none) and its tool requests (through `calls`). */
function onCopilotMessage(state: CopilotParseState, data: Json): ParserOutput[] {
  const out: ParserOutput[] = [];
  const content = str(data.content) ?? '';
  if (content !== '')
    out.push({
      type: 'engine.assistant.message',
      message_id: str(data.messageId) ?? `message#${state.turns}`,
      text: content,
      final: true,
    });
  const requests = Array.isArray(data.toolRequests) ? data.toolRequests : [];
  for (const request of requests)
    if (isObject(request))
      out.push(...onToolCall(state, str(request.toolCallId), str(request.name), request.arguments));
  return out;
}

/** The `result` line: ends the turn (clears `turnOpen`), failed when the exit code or `lastError` says so. */
function onCopilotResult(state: CopilotParseState, event: Json): ParserOutput[] {
  const out: ParserOutput[] = [...reportSession(state, str(event.sessionId)), ...openTurn(state)];
  state.turnOpen = false;
  const exit = int(event.exitCode);
  if (exit === 0 && state.lastError === null) out.push({ type: 'engine.turn.end', status: 'completed', error: null });
  else
    out.push({
      type: 'engine.turn.end',
      status: 'failed',
      error: state.lastError ?? `copilot ended the turn with exit code ${exit ?? 'unknown'}`,
    });
  return out;
}

/**
 * The skills of `session.skills_loaded` that the run brought (project, personal, plugin) as offered skills; the CLI's
 * built-in ones (`source: "builtin"`, shipped in its package) are left out, so they never count for a skill verdict
 * (the raw line in the audit still lists them).
 */
function onSkills(data: Json): ParserOutput[] {
  const skills = Array.isArray(data.skills) ? data.skills.filter(isObject) : [];
  const own = skills
    .filter((skill) => skill.source !== 'builtin')
    .map((skill) => str(skill.name))
    .filter((name): name is string => name !== null);
  return [{ type: 'engine.skills.offered', skills: own, source: 'engine' }];
}

/** The MCP_SERVER_NOT_READY diagnostic for `server`. */
function mcpNotReady(server: string, status: string): ParserOutput {
  return { type: 'diagnostic', diagnostic: mcpNotReadyDiagnostic(server, status) };
}

/** `message (status N)` from a `session.error` event's data, or null. */
function errorMessage(data: Json): string | null {
  const message = str(data.message);
  if (!message) return null;
  const status = int(data.statusCode);
  return status !== null ? `${message} (status ${status})` : message;
}

function usage(data: Json): Usage {
  return {
    input_tokens: count(data.inputTokens),
    output_tokens: count(data.outputTokens),
    cached_input_tokens: count(data.cacheReadTokens),
    reasoning_output_tokens: count(data.reasoningTokens),
  };
}
