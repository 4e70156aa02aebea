/**
 * Parser of `qwen -p … --output-format stream-json` output (Qwen Code, `@qwen-code/qwen-code` 0.24.4): NDJSON on
 * stdout in claude's stream-json shape — `system` (subtype `init` with `session_id`, `tools`, `mcp_servers`,
 * `slash_commands`, `qwen_code_version`), `assistant` / `user` (`{message: {content: [blocks]}}`), `stream_event`
 * (e.g. `goal_state`; partial messages with `--include-partial-messages`) and a closing `result` (subtype `success`
 * | `error_*`, `is_error`, `result`, `usage`). Observed on 0.24.4 against the scripted model server (Chat
 * Completions); the samples are in fixtures/streams/qwen/ (their README says how each was made).
 *
 * Facts this relies on:
 * - one `assistant` event carries a whole model message (text and tool_use blocks together), its `message.id` a
 *   fresh UUID; block ids are `<message id>#<n>`;
 * - a `run_shell_command` tool_result is a text report whose `Exit Code: N` line carries the exit code (`is_error`
 *   stays false for a non-zero exit);
 * - a failed API call shows as an `assistant` text `[API Error: …]`, then a `result` of `is_error: true`, subtype
 *   `error_during_execution`, whose `error.message` says the same;
 * - one `-p` run is one turn: `system/init` opens it, `result` closes it.
 * stderr carries notices (no sandbox under `--yolo`, ripgrep fallback) and the API errors' text.
 */
import type { EngineParser, ParserOutput } from '../engine.js';
import { diag, excerpt, isObject, parseEventLine, str, type Json } from '../parse-helpers.js';
import {
  closeStreamJsonTurn,
  endStreamJson,
  newStreamJsonState,
  onStreamJsonInit,
  onStreamJsonUser,
  readAssistantBlocks,
  readStreamJsonLine,
  type StreamJsonDialect,
  type StreamJsonState,
  type ToolKind,
} from '../stream-json-parse.js';

const FILE_TOOLS = new Set(['write_file', 'edit', 'notebook_edit', 'replace']);
const SHELL_TOOL = 'run_shell_command';
const API_ERROR = /^\[API Error\b/;

/** qwen's init message (`stream-json`, 0.24.4): the session's tools, MCP servers and their status. */
export const QWEN_INIT_MESSAGE: Readonly<Record<string, string>> = { type: 'system', subtype: 'init' };

/** Normalized kind of a qwen tool name. */
export function qwenToolKind(name: string): ToolKind {
  if (name === SHELL_TOOL) return 'shell';
  if (name === 'skill') return 'skill';
  if (FILE_TOOLS.has(name)) return 'file_change';
  if (name === 'web_fetch' || name === 'web_search') return 'web_search';
  if (name.startsWith('mcp__')) return 'mcp';
  return 'other';
}

/** The exit code in a `run_shell_command` report (`Exit Code: N`), or null. */
export function qwenShellExitCode(output: string | null): number | null {
  const match = output ? /^Exit Code: (-?\d+)\s*$/m.exec(output) : null;
  return match ? Number(match[1]) : null;
}

/** qwen's stream-json, as the shared handlers (stream-json-parse.ts) read it. */
const QWEN_DIALECT: StreamJsonDialect = {
  unknownCode: 'QWEN_UNKNOWN_EVENT',
  turnNotEndedCode: 'QWEN_TURN_NOT_ENDED',
  stderrError: /\bERROR\b|Error:|error:|\[API Error/,
  toolKind: qwenToolKind,
  fileTools: FILE_TOOLS,
  writeTool: 'write_file',
  silentBlocks: new Set(),
  // A failed API call is reported as the model's text (`[API Error: 401 …]`); `result` then fails the turn.
  textIsError: (text) => API_ERROR.test(text),
  // `is_error` stays false for a shell command's non-zero exit: its report's `Exit Code: N` says it failed.
  toolOutcome: (callName, isError, output) => {
    const exitCode = callName === SHELL_TOOL ? qwenShellExitCode(output) : null;
    return { failed: isError || (exitCode !== null && exitCode !== 0), exitCode };
  },
};

/** A fresh parser for one qwen attempt. Never throws. */
export function createQwenParser(): EngineParser {
  const state = newStreamJsonState();
  return {
    line: (stream, text) =>
      readStreamJsonLine(QWEN_DIALECT, stream, text, (line) =>
        parseEventLine(line, 'a qwen event object', (event, eventText) => onQwenEvent(state, event, eventText)),
      ),
    end: () => endStreamJson(state, QWEN_DIALECT),
  };
}

/** One stream-json event, by its type. */
function onQwenEvent(state: StreamJsonState, event: Json & { type: string }, text: string): ParserOutput[] {
  switch (event.type) {
    case 'system':
      return onQwenSystem(state, event, text);
    case 'assistant': {
      const message = isObject(event.message) ? event.message : null;
      if (!message || !Array.isArray(message.content))
        return [diag('STREAM_PARSE_ERROR', `assistant event without message.content: ${excerpt(text)}`)];
      const messageId = str(message.id) ?? str(event.uuid) ?? 'message';
      return readAssistantBlocks(state, QWEN_DIALECT, messageId, message.content, text);
    }
    case 'user':
      return onStreamJsonUser(state, QWEN_DIALECT, event);
    case 'result':
      return onQwenResult(state, event);
    // Partial messages and qwen's own state (`goal_state`): the whole messages follow as `assistant` events.
    case 'stream_event':
      return [];
    default:
      return [
        diag('QWEN_UNKNOWN_EVENT', `unknown qwen event type ${JSON.stringify(event.type)}: ${excerpt(text)}`, 'info'),
      ];
  }
}

/** A `system` event: `init` opens the turn (stream-json-parse.ts); `retry` says nothing. */
function onQwenSystem(state: StreamJsonState, event: Json, text: string): ParserOutput[] {
  // A model call retried after a cut stream (`{reason: "retry", discardedToolCalls, preserveText}`, 0.24.4): it
  // carries no error of its own; a retry that fails too ends the run with a `result` naming the error.
  if (event.subtype === 'retry') return [];
  if (event.subtype !== 'init')
    return [
      diag(
        'QWEN_UNKNOWN_EVENT',
        `unknown qwen system subtype ${JSON.stringify(event.subtype)}: ${excerpt(text)}`,
        'info',
      ),
    ];
  return onStreamJsonInit(state, event, text);
}

/** A `result` event closes the turn (stream-json-parse.ts), then ends it completed or failed. */
function onQwenResult(state: StreamJsonState, event: Json): ParserOutput[] {
  const out = closeStreamJsonTurn(state, event, event.is_error !== true);
  const failed = event.is_error === true || (event.subtype !== undefined && event.subtype !== 'success');
  if (!failed) return [...out, { type: 'engine.turn.end', status: 'completed', error: null }];
  const error =
    (isObject(event.error) ? str(event.error.message) : str(event.error)) ||
    str(event.result) ||
    `qwen result ${String(event.subtype ?? 'error')} without a message`;
  return [...out, { type: 'engine.turn.end', status: 'failed', error }];
}
