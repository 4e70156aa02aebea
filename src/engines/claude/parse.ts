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
import type { ParsedEvent, StreamName, Usage } from '../../protocol/index.js';
import type { EngineParser, ParserOutput } from '../engine.js';
import { diag, excerpt, isObject, str, int, count, type Json } from '../parse-helpers.js';
import { mcpNotReadyDiagnostic } from '../mcp-readiness.js';

type ToolKind = Extract<ParsedEvent, { type: 'engine.tool.call' }>['kind'];

const STDERR_ERROR = /\bERROR\b|Error:|error:/;
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

/** A fresh parser for one claude attempt. Never throws. */
export function createClaudeParser(): EngineParser {
  let turnOpen = false;
  let sessionSeen: string | null = null;
  const blocksPerMessage = new Map<string, number>();
  const calls = new Map<string, { name: string; input: unknown }>();
  // Whether this turn already produced an assistant text: a json-mode `result` then adds none of its own.
  let textThisTurn = false;

  function onAssistant(event: Json, text: string): ParserOutput[] {
    const message = isObject(event.message) ? event.message : null;
    if (!message || !Array.isArray(message.content))
      return [diag('STREAM_PARSE_ERROR', `assistant event without message.content: ${excerpt(text)}`)];
    const messageId = str(message.id) ?? str(event.uuid) ?? 'message';
    if (message.model === '<synthetic>' && contextExhausted(syntheticText(message.content))) {
      // Context exhausted: claude's only answer is this text, so it is the final message; `result` fails the turn.
      textThisTurn = true;
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
    const out: ParserOutput[] = [];
    for (const block of message.content) {
      const n = blocksPerMessage.get(messageId) ?? 0;
      blocksPerMessage.set(messageId, n + 1);
      const blockId = `${messageId}#${n}`;
      if (!isObject(block)) {
        out.push(diag('STREAM_PARSE_ERROR', `assistant content block is not an object: ${excerpt(text)}`));
        continue;
      }
      switch (block.type) {
        case 'text':
          textThisTurn = true;
          out.push({ type: 'engine.assistant.message', message_id: blockId, text: str(block.text) ?? '', final: true });
          break;
        case 'thinking':
          out.push({ type: 'engine.reasoning', item_id: blockId, text: str(block.thinking) ?? '' });
          break;
        case 'redacted_thinking':
          break;
        case 'tool_use': {
          const callId = str(block.id) ?? blockId;
          const name = str(block.name) ?? 'unknown';
          if (calls.has(callId)) break;
          calls.set(callId, { name, input: block.input ?? null });
          out.push({
            type: 'engine.tool.call',
            call_id: callId,
            kind: claudeToolKind(name),
            name,
            input: block.input ?? null,
          });
          break;
        }
        default:
          out.push(
            diag('CLAUDE_UNKNOWN_EVENT', `unknown assistant content block ${JSON.stringify(block.type)}`, 'info'),
          );
      }
    }
    return out;
  }

  function onUser(event: Json): ParserOutput[] {
    const message = isObject(event.message) ? event.message : null;
    // A replayed user prompt (string content) is not a tool fact.
    if (!message || !Array.isArray(message.content)) return [];
    const out: ParserOutput[] = [];
    for (const block of message.content) {
      if (!isObject(block) || block.type !== 'tool_result') continue;
      const callId = str(block.tool_use_id) ?? 'unknown';
      const failed = block.is_error === true;
      const output = resultText(block.content);
      const call = calls.get(callId);
      const exitCode = call?.name === 'Bash' ? (failed ? exitCodeOf(output) : 0) : null;
      out.push({
        type: 'engine.tool.result',
        call_id: callId,
        status: failed ? 'failed' : 'completed',
        output,
        exit_code: exitCode,
      });
      if (!failed && call && FILE_TOOLS.has(call.name)) {
        const input = isObject(call.input) ? call.input : {};
        const file = str(input.file_path) ?? str(input.notebook_path);
        if (file)
          out.push({
            type: 'engine.file.change',
            changes: [{ path: file, kind: call.name === 'Write' ? 'write' : 'edit' }],
          });
      }
    }
    return out;
  }

  function onSystem(event: Json, text: string): ParserOutput[] {
    switch (event.subtype) {
      case 'init': {
        const id = str(event.session_id);
        if (!id) return [diag('STREAM_PARSE_ERROR', `system/init without session_id: ${excerpt(text)}`)];
        const out: ParserOutput[] = [];
        if (sessionSeen !== id) out.push({ type: 'engine.session', session_id: id });
        sessionSeen = id;
        if (!turnOpen) out.push({ type: 'engine.turn.started' });
        turnOpen = true;
        // Declared MCP servers are listed with their status: waited for (MCP_CONNECTION_NONBLOCKING=0), each is
        // `connected` by now, or `failed` / `pending` (not ready: its tools are not offered).
        if (Array.isArray(event.mcp_servers))
          for (const server of event.mcp_servers.filter(isObject)) {
            const name = str(server.name);
            const status = str(server.status);
            if (name && status && status !== 'connected')
              out.push({ type: 'diagnostic', diagnostic: mcpNotReadyDiagnostic(name, `status ${status}`) });
          }
        // 2.1.197's init event lists the skills claude offers the model (user, project and bundled ones).
        if (Array.isArray(event.skills))
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

  function onResult(event: Json): ParserOutput[] {
    const out: ParserOutput[] = [];
    // `--output-format json` prints only this object: its session_id and result text are the whole story.
    const id = str(event.session_id);
    if (id && sessionSeen !== id) out.push({ type: 'engine.session', session_id: id });
    if (id) sessionSeen = id;
    if (!turnOpen) out.push({ type: 'engine.turn.started' });
    turnOpen = false;
    const text = str(event.result);
    const exhausted = text !== null && contextExhausted(text);
    if (text && !textThisTurn && (event.is_error !== true || exhausted)) {
      out.push({ type: 'engine.assistant.message', message_id: `result:${id ?? 'session'}`, text, final: true });
    }
    textThisTurn = false;
    out.push({ type: 'engine.usage', usage: usage(event.usage) });
    // claude reports "Prompt is too long" with is_error false and subtype success: the turn still failed.
    const failed = exhausted || event.is_error === true || (event.subtype !== undefined && event.subtype !== 'success');
    if (!failed) return [...out, { type: 'engine.turn.end', status: 'completed', error: null }];
    const errors = Array.isArray(event.errors) ? event.errors.filter((e): e is string => typeof e === 'string') : [];
    const error =
      str(event.result) || errors.join('\n') || `claude result ${String(event.subtype ?? 'error')} without a message`;
    return [...out, { type: 'engine.turn.end', status: 'failed', error }];
  }

  function onEvent(event: Json & { type: string }, text: string): ParserOutput[] {
    switch (event.type) {
      case 'system':
        return onSystem(event, text);
      case 'assistant':
        return onAssistant(event, text);
      case 'user':
        return onUser(event);
      case 'result':
        return onResult(event);
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
   */
  function onLegacy(message: Json, text: string): ParserOutput[] {
    switch (message.role) {
      case 'system':
        if ('result' in message || 'cost_usd' in message || 'is_error' in message) return onResult(message);
        if (str(message.session_id)) return onSystem({ ...message, subtype: 'init' }, text);
        if (turnOpen) return [];
        turnOpen = true;
        return [{ type: 'engine.turn.started' }];
      case 'assistant':
        return onAssistant({ message }, text);
      case 'user':
        return onUser({ message });
      default:
        return [diag('CLAUDE_UNKNOWN_EVENT', `unknown claude message role: ${excerpt(text)}`, 'info')];
    }
  }

  /** One element of a line: an event (`type`), or an older `role` message (an Anthropic message has type `message`). */
  function onItem(item: unknown, text: string): ParserOutput[] {
    if (isObject(item) && typeof item.type === 'string' && item.type !== 'message')
      return onEvent(item as Json & { type: string }, text);
    if (isObject(item) && typeof item.role === 'string') return onLegacy(item, text);
    return [diag('STREAM_PARSE_ERROR', `stdout line is not a claude event object: ${excerpt(text)}`)];
  }

  /** A stdout line: one event (stream-json, json), or the array `--output-format json --verbose` prints. */
  function parseStdoutLine(text: string): ParserOutput[] {
    if (text.trim() === '') return [];
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      return [diag('STREAM_PARSE_ERROR', `stdout line is not JSON: ${excerpt(text)}`)];
    }
    if (!Array.isArray(value) || !value.some(isObject)) return onItem(value, text);
    return value.flatMap((item) => onItem(item, JSON.stringify(item)));
  }

  return {
    line(stream: StreamName, text: string): ParserOutput[] {
      try {
        if (stream === 'stderr' || (stream === 'pty' && !text.trimStart().startsWith('{'))) {
          return STDERR_ERROR.test(text) ? [diag('ENGINE_STDERR', excerpt(text), 'info')] : [];
        }
        return parseStdoutLine(stream === 'pty' ? text.trimStart() : text);
      } catch (error) {
        return [diag('STREAM_PARSE_ERROR', `parser failed on a line: ${(error as Error).message}`)];
      }
    },
    end(): ParserOutput[] {
      return turnOpen
        ? [diag('CLAUDE_TURN_NOT_ENDED', 'system/init was seen but the stream ended without a result event')]
        : [];
    },
  };
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

function exitCodeOf(output: string | null): number | null {
  const match = output ? /^Exit code (\d+)/.exec(output) : null;
  return match ? Number(match[1]) : null;
}

/**
 * Anthropic's `input_tokens` leave out the tokens read from the prompt cache (`cache_read_input_tokens`, the usage's
 * `cached_input_tokens`): `EngineAdapter.cacheReportedApart`.
 */
export const CLAUDE_CACHE_REPORTED_APART = true;

function usage(value: unknown): Usage {
  const u = isObject(value) ? value : {};
  return {
    input_tokens: count(u.input_tokens),
    output_tokens: count(u.output_tokens),
    cached_input_tokens: count(u.cache_read_input_tokens),
    reasoning_output_tokens: null,
  };
}
