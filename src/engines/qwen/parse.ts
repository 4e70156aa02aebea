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
import type { ParsedEvent, StreamName, Usage } from '../../protocol/index.js';
import type { EngineParser, ParserOutput } from '../engine.js';
import { mcpNotReadyDiagnostic } from '../mcp-readiness.js';
import { count, diag, excerpt, isObject, str, type Json } from '../parse-helpers.js';

type ToolKind = Extract<ParsedEvent, { type: 'engine.tool.call' }>['kind'];

const STDERR_ERROR = /\bERROR\b|Error:|error:|\[API Error/;
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

/** A fresh parser for one qwen attempt. Never throws. */
export function createQwenParser(): EngineParser {
  let turnOpen = false;
  let sessionSeen: string | null = null;
  const blocksPerMessage = new Map<string, number>();
  const calls = new Map<string, { name: string; input: unknown }>();
  let textThisTurn = false;

  function onAssistant(event: Json, text: string): ParserOutput[] {
    const message = isObject(event.message) ? event.message : null;
    if (!message || !Array.isArray(message.content))
      return [diag('STREAM_PARSE_ERROR', `assistant event without message.content: ${excerpt(text)}`)];
    const messageId = str(message.id) ?? str(event.uuid) ?? 'message';
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
        case 'text': {
          const said = str(block.text) ?? '';
          // A failed API call is reported as the model's text (`[API Error: 401 …]`); `result` then fails the turn.
          if (API_ERROR.test(said)) {
            out.push({ type: 'engine.error', message: said, fatal: false });
            break;
          }
          textThisTurn = true;
          out.push({ type: 'engine.assistant.message', message_id: blockId, text: said, final: true });
          break;
        }
        case 'thinking':
          out.push({ type: 'engine.reasoning', item_id: blockId, text: str(block.thinking) ?? '' });
          break;
        case 'tool_use': {
          const callId = str(block.id) ?? blockId;
          const name = str(block.name) ?? 'unknown';
          if (calls.has(callId)) break;
          calls.set(callId, { name, input: block.input ?? null });
          out.push({
            type: 'engine.tool.call',
            call_id: callId,
            kind: qwenToolKind(name),
            name,
            input: block.input ?? null,
          });
          break;
        }
        default:
          out.push(diag('QWEN_UNKNOWN_EVENT', `unknown assistant content block ${JSON.stringify(block.type)}`, 'info'));
      }
    }
    return out;
  }

  function onUser(event: Json): ParserOutput[] {
    const message = isObject(event.message) ? event.message : null;
    if (!message || !Array.isArray(message.content)) return [];
    const out: ParserOutput[] = [];
    for (const block of message.content) {
      if (!isObject(block) || block.type !== 'tool_result') continue;
      const callId = str(block.tool_use_id) ?? 'unknown';
      const output = resultText(block.content);
      const call = calls.get(callId);
      const exitCode = call?.name === SHELL_TOOL ? qwenShellExitCode(output) : null;
      const failed = block.is_error === true || (exitCode !== null && exitCode !== 0);
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
            changes: [{ path: file, kind: call.name === 'write_file' ? 'write' : 'edit' }],
          });
      }
    }
    return out;
  }

  function onSystem(event: Json, text: string): ParserOutput[] {
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
    const id = str(event.session_id);
    if (!id) return [diag('STREAM_PARSE_ERROR', `system/init without session_id: ${excerpt(text)}`)];
    const out: ParserOutput[] = [];
    if (sessionSeen !== id) out.push({ type: 'engine.session', session_id: id });
    sessionSeen = id;
    if (!turnOpen) out.push({ type: 'engine.turn.started' });
    turnOpen = true;
    // Declared MCP servers are listed with their status: one not `connected` offers no tools.
    if (Array.isArray(event.mcp_servers))
      for (const server of event.mcp_servers.filter(isObject)) {
        const name = str(server.name);
        const status = str(server.status);
        if (name && status && status !== 'connected')
          out.push({ type: 'diagnostic', diagnostic: mcpNotReadyDiagnostic(name, `status ${status}`) });
      }
    return out;
  }

  function onResult(event: Json): ParserOutput[] {
    const out: ParserOutput[] = [];
    const id = str(event.session_id);
    if (id && sessionSeen !== id) out.push({ type: 'engine.session', session_id: id });
    if (id) sessionSeen = id;
    if (!turnOpen) out.push({ type: 'engine.turn.started' });
    turnOpen = false;
    const text = str(event.result);
    if (text && !textThisTurn && event.is_error !== true)
      out.push({ type: 'engine.assistant.message', message_id: `result:${id ?? 'session'}`, text, final: true });
    textThisTurn = false;
    out.push({ type: 'engine.usage', usage: usage(event.usage) });
    const failed = event.is_error === true || (event.subtype !== undefined && event.subtype !== 'success');
    if (!failed) return [...out, { type: 'engine.turn.end', status: 'completed', error: null }];
    const error =
      (isObject(event.error) ? str(event.error.message) : str(event.error)) ||
      text ||
      `qwen result ${String(event.subtype ?? 'error')} without a message`;
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
      // Partial messages and qwen's own state (`goal_state`): the whole messages follow as `assistant` events.
      case 'stream_event':
        return [];
      default:
        return [
          diag('QWEN_UNKNOWN_EVENT', `unknown qwen event type ${JSON.stringify(event.type)}: ${excerpt(text)}`, 'info'),
        ];
    }
  }

  function parseStdoutLine(text: string): ParserOutput[] {
    if (text.trim() === '') return [];
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      return [diag('STREAM_PARSE_ERROR', `stdout line is not JSON: ${excerpt(text)}`)];
    }
    if (isObject(value) && typeof value.type === 'string') return onEvent(value as Json & { type: string }, text);
    return [diag('STREAM_PARSE_ERROR', `stdout line is not a qwen event object: ${excerpt(text)}`)];
  }

  return {
    line(stream: StreamName, text: string): ParserOutput[] {
      try {
        if (stream === 'stderr' || (stream === 'pty' && !text.trimStart().startsWith('{')))
          return STDERR_ERROR.test(text) ? [diag('ENGINE_STDERR', excerpt(text), 'info')] : [];
        return parseStdoutLine(stream === 'pty' ? text.trimStart() : text);
      } catch (error) {
        return [diag('STREAM_PARSE_ERROR', `parser failed on a line: ${(error as Error).message}`)];
      }
    },
    end(): ParserOutput[] {
      return turnOpen
        ? [diag('QWEN_TURN_NOT_ENDED', 'system/init was seen but the stream ended without a result event')]
        : [];
    },
  };
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

/** qwen's usage: `input_tokens` include the cached ones (OpenAI's `prompt_tokens`), reported as `cache_read_input_tokens`. */
function usage(value: unknown): Usage {
  const u = isObject(value) ? value : {};
  return {
    input_tokens: count(u.input_tokens),
    output_tokens: count(u.output_tokens),
    cached_input_tokens: count(u.cache_read_input_tokens),
    reasoning_output_tokens: null,
  };
}
