/**
 * Parser of `claude -p --output-format stream-json --verbose` output: NDJSON on stdout, one event per line —
 * `system` (subtype `init` with session_id, tools, skills…; `api_retry`; `status`; `task_*`), `assistant` / `user`
 * ({message:{content:[blocks]}}), `stream_event` (only with --include-partial-messages) and a closing
 * `result` (subtype `success` | `error_*`, `is_error`, `result`, `usage`). Observed on claude-code 2.1.197
 * (`@anthropic-ai/claude-code`); samples recorded against the local mock model,
 * shared/research/samples/claude-turn1 and claude-turn2-resume, plus streams recorded by
 * tests/engine/engine-matrix.engine.test.ts (all in fixtures/streams/claude/).
 *
 * Facts this relies on:
 * - claude emits one `assistant` event per content block, several sharing a `message.id`; message ids are
 *   made unique by counting blocks per `message.id` (`msg_x#0`, `msg_x#1`);
 * - a Bash `tool_result` carries no exit code: success is `is_error: false`, a failure starts
 *   `Exit code N`;
 * - a failed API call shows as an `assistant` event with `error` and model `<synthetic>` (the error text as
 *   content), then `result` with `is_error: true` — even with subtype `success`;
 * - one `-p` run is one turn: `system/init` opens it, `result` closes it.
 */
import type { EngineParser, ParserOutput } from '../engine.js';
import { diag, excerpt, isObject, str, int, type Json } from '../parse-helpers.js';
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

const FILE_TOOLS = new Set(['Write', 'Edit', 'MultiEdit', 'NotebookEdit']);

/** claude's init message (`stream-json`, 2.1.197): the session's tools, MCP servers and their status, skills. */
export const CLAUDE_INIT_MESSAGE: Readonly<Record<string, string>> = { type: 'system', subtype: 'init' };

/** Normalized kind of a claude tool name. */
export function claudeToolKind(name: string): ToolKind {
  if (name === 'Bash') return 'shell';
  if (name === 'Skill') return 'skill';
  if (FILE_TOOLS.has(name)) return 'file_change';
  if (name === 'WebSearch' || name === 'WebFetch') return 'web_search';
  if (name.startsWith('mcp__')) return 'mcp';
  return 'other';
}

/** claude's stream-json, as the shared handlers (stream-json-parse.ts) read it. */
const CLAUDE_DIALECT: StreamJsonDialect = {
  unknownCode: 'CLAUDE_UNKNOWN_EVENT',
  turnNotEndedCode: 'CLAUDE_TURN_NOT_ENDED',
  stderrError: /\bERROR\b|Error:|error:/,
  toolKind: claudeToolKind,
  fileTools: FILE_TOOLS,
  writeTool: 'Write',
  silentBlocks: new Set(['redacted_thinking']),
  textIsError: () => false,
  // A Bash tool_result carries no exit code: success is `is_error: false`, a failure starts `Exit code N`.
  toolOutcome: (callName, isError, output) => ({
    failed: isError,
    exitCode: callName === 'Bash' ? (isError ? exitCodeOf(output) : 0) : null,
  }),
};

/** A fresh parser for one claude attempt. Never throws. */
export function createClaudeParser(): EngineParser {
  const state = newStreamJsonState();
  return {
    line: (stream, text) =>
      readStreamJsonLine(CLAUDE_DIALECT, stream, text, (line) => readClaudeStdoutLine(state, line)),
    end: () => endStreamJson(state, CLAUDE_DIALECT),
  };
}

/** A stdout line: one event (stream-json, json), or the array `--output-format json --verbose` prints. */
function readClaudeStdoutLine(state: StreamJsonState, text: string): ParserOutput[] {
  if (text.trim() === '') return [];
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return [diag('STREAM_PARSE_ERROR', `stdout line is not JSON: ${excerpt(text)}`)];
  }
  if (!Array.isArray(value) || !value.some(isObject)) return onClaudeItem(state, value, text);
  return value.flatMap((item) => onClaudeItem(state, item, JSON.stringify(item)));
}

/** One element of a line: an event (`type`), or an older `role` message (an Anthropic message has type `message`). */
function onClaudeItem(state: StreamJsonState, item: unknown, text: string): ParserOutput[] {
  if (isObject(item) && typeof item.type === 'string' && item.type !== 'message')
    return onClaudeEvent(state, item as Json & { type: string }, text);
  if (isObject(item) && typeof item.role === 'string') return onClaudeLegacy(state, item, text);
  return [diag('STREAM_PARSE_ERROR', `stdout line is not a claude event object: ${excerpt(text)}`)];
}

/** One stream-json event, by its type. */
function onClaudeEvent(state: StreamJsonState, event: Json & { type: string }, text: string): ParserOutput[] {
  switch (event.type) {
    case 'system':
      return onClaudeSystem(state, event, text);
    case 'assistant':
      return onClaudeAssistant(state, event, text);
    case 'user':
      return onStreamJsonUser(state, CLAUDE_DIALECT, event);
    case 'result':
      return onClaudeResult(state, event);
    case 'stream_event':
    case 'rate_limit_event':
      return [];
    default:
      return [
        diag(
          'CLAUDE_UNKNOWN_EVENT',
          `unknown claude event type ${JSON.stringify(event.type)}: ${excerpt(text)}`,
          'info',
        ),
      ];
  }
}

/**
 * A message of claude's older `--output-format json` (May 2025): no `type`, a `role` — `system` (the session, or
 * the closing cost/result summary), `assistant` (an Anthropic message: content blocks), `user` (tool results).
 * A bare `system` message opens the turn (`turnOpen`).
 */
function onClaudeLegacy(state: StreamJsonState, message: Json, text: string): ParserOutput[] {
  switch (message.role) {
    case 'system':
      if ('result' in message || 'cost_usd' in message || 'is_error' in message) return onClaudeResult(state, message);
      if (str(message.session_id)) return onClaudeSystem(state, { ...message, subtype: 'init' }, text);
      if (state.turnOpen) return [];
      state.turnOpen = true;
      return [{ type: 'engine.turn.started' }];
    case 'assistant':
      return onClaudeAssistant(state, { message }, text);
    case 'user':
      return onStreamJsonUser(state, CLAUDE_DIALECT, { message });
    default:
      return [diag('CLAUDE_UNKNOWN_EVENT', `unknown claude message role: ${excerpt(text)}`, 'info')];
  }
}

/**
 * An `assistant` event: claude's synthetic answers (context exhausted: sets `textThisTurn`; a failed API call), else
 * its blocks (stream-json-parse.ts).
 */
function onClaudeAssistant(state: StreamJsonState, event: Json, text: string): ParserOutput[] {
  const message = isObject(event.message) ? event.message : null;
  if (!message || !Array.isArray(message.content))
    return [diag('STREAM_PARSE_ERROR', `assistant event without message.content: ${excerpt(text)}`)];
  const messageId = str(message.id) ?? str(event.uuid) ?? 'message';
  if (message.model === '<synthetic>' && contextExhausted(syntheticText(message.content))) {
    // Context exhausted: claude's only answer is this text, so it is the final message; `result` fails the turn.
    state.textThisTurn = true;
    return [
      {
        type: 'engine.assistant.message',
        message_id: `${messageId}#0`,
        text: syntheticText(message.content),
        final: true,
      },
    ];
  }
  if (typeof event.error === 'string' && message.model === '<synthetic>') {
    // claude's own message standing in for a failed API call ("API Error: 500 …"); `result` fails the turn.
    const texts = message.content
      .filter(isObject)
      .map((block) => str(block.text))
      .filter((t): t is string => t !== null);
    return [{ type: 'engine.error', message: texts.join('\n') || event.error, fatal: false }];
  }
  return readAssistantBlocks(state, CLAUDE_DIALECT, messageId, message.content, text);
}

/** A `system` event: `init` opens the turn (stream-json-parse.ts) and lists the skills; the others say little. */
function onClaudeSystem(state: StreamJsonState, event: Json, text: string): ParserOutput[] {
  switch (event.subtype) {
    case 'init': {
      const out = onStreamJsonInit(state, event, text);
      // 2.1.197's init event lists the skills claude offers the model (user, project and bundled ones).
      if (str(event.session_id) && Array.isArray(event.skills))
        out.push({
          type: 'engine.skills.offered',
          skills: event.skills.filter((s): s is string => typeof s === 'string'),
          source: 'engine',
        });
      return out;
    }
    case 'api_retry': {
      const status = int(event.error_status);
      const error = str(event.error) ?? 'API request failed';
      return [
        {
          type: 'engine.error',
          message: `API retry ${int(event.attempt) ?? '?'}/${int(event.max_retries) ?? '?'}: ${error}${status !== null ? ` (status ${status})` : ''}`,
          fatal: false,
        },
      ];
    }
    // A task's lifecycle (2.1.197 emits task_started and task_notification for any Bash command lasting a few
    // seconds, `task_type: local_bash`; sub-agents add task_progress, later versions task_updated): the tool call
    // and its tool_result, in `assistant` and `user` events, already carry what it did, and FCMP has no event for a
    // background task of its own, so these are accepted without a diagnostic.
    case 'task_started':
    case 'task_progress':
    case 'task_updated':
    case 'task_notification':
    case 'status':
    case 'thinking_tokens':
    case 'compact_boundary':
    case 'hook_started':
    case 'hook_response':
      return [];
    default:
      return [
        diag(
          'CLAUDE_UNKNOWN_EVENT',
          `unknown claude system subtype ${JSON.stringify(event.subtype)}: ${excerpt(text)}`,
          'info',
        ),
      ];
  }
}

/**
 * A `result` event closes the turn (stream-json-parse.ts; `--output-format json` prints only this object: its
 * session_id and result text are the whole story), then ends it completed or failed.
 */
function onClaudeResult(state: StreamJsonState, event: Json): ParserOutput[] {
  const text = str(event.result);
  const exhausted = text !== null && contextExhausted(text);
  const out = closeStreamJsonTurn(state, event, event.is_error !== true || exhausted);
  // claude reports "Prompt is too long" with is_error false and subtype success: the turn still failed.
  const failed = exhausted || event.is_error === true || (event.subtype !== undefined && event.subtype !== 'success');
  if (!failed) return [...out, { type: 'engine.turn.end', status: 'completed', error: null }];
  const errors = Array.isArray(event.errors) ? event.errors.filter((e): e is string => typeof e === 'string') : [];
  const error =
    str(event.result) || errors.join('\n') || `claude result ${String(event.subtype ?? 'error')} without a message`;
  return [...out, { type: 'engine.turn.end', status: 'failed', error }];
}

/** True for claude's context-exhaustion answer ("Prompt is too long"). */
function contextExhausted(text: string): boolean {
  return /^\s*prompt is too long\b/i.test(text);
}

/** Text blocks of a synthetic assistant message, joined. */
function syntheticText(content: unknown[]): string {
  return content
    .filter(isObject)
    .map((block) => str(block.text))
    .filter((t): t is string => t !== null)
    .join('\n');
}

function exitCodeOf(output: string | null): number | null {
  const match = output ? /^Exit code (\d+)/.exec(output) : null;
  return match ? Number(match[1]) : null;
}

/**
 * Anthropic's `input_tokens` leave out the tokens read from the prompt cache (`cache_read_input_tokens`, the usage's
 * `cached_input_tokens`): `EngineAdapter.cacheReportedApart`.
 */
export const CLAUDE_CACHE_REPORTED_APART = true;
