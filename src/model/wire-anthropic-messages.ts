/**
 * Anthropic Messages API (`POST /v1/messages`, claude sends `?beta=true`), as claude-code 2.1.197 speaks it
 * with `ANTHROPIC_BASE_URL`. With `stream: true` the answer is SSE `event: <type>\ndata: <json>` blocks:
 * message_start, then per content block content_block_start / content_block_delta (text_delta,
 * input_json_delta, thinking_delta + signature_delta) / content_block_stop, then message_delta (stop_reason
 * end_turn | tool_use) and message_stop. The minimal sequence claude accepts is message_start + block start,
 * ≥1 delta, block stop; without message_start it falls back to `stream: false`, answered with a plain
 * message JSON (shared/research/codex-claude.md §3, samples/sse-messages-*.txt).
 *
 * A shell turn is a tool_use of the engine's shell tool (its tool table, `src/engines/<id>/facts.ts`). Side requests are answered without the
 * script: structured-output requests (`output_config.format.type == "json_schema"`, e.g. the session title
 * claude asks for when nonessential traffic is on) get a JSON text built from the schema, and
 * `POST /v1/messages/count_tokens` gets `{"input_tokens": 10}`. Both are side requests (`sideRequestKind`):
 * answered before the server picks a scripted turn, so they never use up or fail with one.
 */
import { randomBytes } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import { finalText, nativeIntentCall, requestWorkingDirectory } from './script-turns.js';
import type { ContentTurn } from './script.js';
import { shellToolCall } from './tool-table.js';
import type { WireApiHandler, WireRequest } from './wire-api.js';

type Json = Record<string, unknown>;
type RenderedTurn = ContentTurn;
type Message = { role?: unknown; content?: unknown };

/** Path of the token-counting route. */
const COUNT_TOKENS = '/v1/messages/count_tokens';

function id(prefix: string): string {
  return `${prefix}_${randomBytes(12).toString('hex')}`;
}

function messages(body: unknown): Message[] {
  const list = (body as { messages?: unknown } | null)?.messages;
  return Array.isArray(list) ? list.filter((m): m is Message => typeof m === 'object' && m !== null) : [];
}

/** Text of a message `content`: a string, or the `text` blocks of a block list. */
function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .filter((block) => (block as { type?: unknown }).type === 'text')
    .map((block) => (block as { text?: unknown }).text)
    .filter((text): text is string => typeof text === 'string')
    .join('\n');
}

function anthropicToolNames(body: unknown): string[] {
  const tools = (body as { tools?: unknown } | null)?.tools;
  return Array.isArray(tools)
    ? tools.map((t) => (t as { name?: unknown }).name).filter((n): n is string => typeof n === 'string')
    : [];
}

/** True for a structured-output side request (`output_config.format.type == "json_schema"`). */
export function isAnthropicJsonSchemaRequest(body: unknown): boolean {
  const format = (body as { output_config?: { format?: { type?: unknown } } } | null)?.output_config?.format;
  return format?.type === 'json_schema';
}

/** A value matching a JSON schema, minimally: objects get their properties, strings are "x". */
export function sampleFromSchema(schema: unknown, depth = 0): unknown {
  const s = (typeof schema === 'object' && schema !== null ? schema : {}) as Json;
  if (Array.isArray(s.enum) && s.enum.length > 0) return s.enum[0];
  const type = Array.isArray(s.type) ? s.type[0] : s.type;
  if (depth > 8) return null;
  switch (type) {
    case 'object': {
      const props = (typeof s.properties === 'object' && s.properties !== null ? s.properties : {}) as Json;
      return Object.fromEntries(Object.entries(props).map(([key, value]) => [key, sampleFromSchema(value, depth + 1)]));
    }
    case 'array':
      return [];
    case 'number':
    case 'integer':
      return 0;
    case 'boolean':
      return false;
    case 'null':
      return null;
    default:
      return 'x';
  }
}

/** Content blocks of a turn (reasoning first as a thinking block, then text or the shell call). */
function contentBlocks(request: WireRequest, turn: RenderedTurn): Json[] {
  if (isAnthropicJsonSchemaRequest(request.body)) {
    const schema = (request.body as { output_config: { format: { schema?: unknown } } }).output_config.format.schema;
    return [{ type: 'text', text: JSON.stringify(sampleFromSchema(schema ?? { type: 'object' })) }];
  }
  const blocks: Json[] = [];
  if ((turn.type === 'text' || turn.type === 'final') && turn.reasoning) {
    blocks.push({ type: 'thinking', thinking: turn.reasoning, signature: `sig_${randomBytes(16).toString('hex')}` });
  }
  const native =
    turn.type === 'shell'
      ? nativeIntentCall(
          turn,
          anthropicToolNames(request.body),
          request.tools ?? [],
          requestWorkingDirectory(request.body),
        )
      : null;
  if (native) {
    blocks.push({ type: 'tool_use', id: id('toolu'), name: native.name, input: native.args });
  } else if (turn.type === 'shell') {
    const { name, args } = shellToolCall(request.tools ?? [], anthropicToolNames(request.body), turn.command);
    blocks.push({ type: 'tool_use', id: id('toolu'), name, input: args });
  } else {
    blocks.push({ type: 'text', text: turn.type === 'final' ? finalText(turn) : turn.text });
  }
  return blocks;
}

function usage(): Json {
  return { input_tokens: 10, output_tokens: 5, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 };
}

function sse(response: ServerResponse, event: Json): void {
  response.write(`event: ${String(event.type)}\ndata: ${JSON.stringify(event)}\n\n`);
}

/** The SSE events of one content block: start (empty), delta(s), stop. */
function blockEvents(block: Json, index: number): Json[] {
  const start = (contentBlock: Json): Json => ({ type: 'content_block_start', index, content_block: contentBlock });
  const delta = (d: Json): Json => ({ type: 'content_block_delta', index, delta: d });
  const stop: Json = { type: 'content_block_stop', index };
  if (block.type === 'tool_use') {
    return [
      start({ type: 'tool_use', id: block.id, name: block.name, input: {} }),
      delta({ type: 'input_json_delta', partial_json: JSON.stringify(block.input) }),
      stop,
    ];
  }
  if (block.type === 'thinking') {
    return [
      start({ type: 'thinking', thinking: '', signature: '' }),
      delta({ type: 'thinking_delta', thinking: block.thinking }),
      delta({ type: 'signature_delta', signature: block.signature }),
      stop,
    ];
  }
  return [start({ type: 'text', text: '' }), delta({ type: 'text_delta', text: block.text }), stop];
}

/** Anthropic error `type` for an HTTP status. */
export function anthropicErrorType(status: number): string {
  if (status === 400 || status === 422) return 'invalid_request_error';
  if (status === 401) return 'authentication_error';
  if (status === 403) return 'permission_error';
  if (status === 404) return 'not_found_error';
  if (status === 413) return 'request_too_large';
  if (status === 429) return 'rate_limit_error';
  if (status === 529) return 'overloaded_error';
  return 'api_error';
}

/** The Anthropic Messages handler. */
export const anthropicMessagesWire: WireApiHandler = {
  id: 'anthropic-messages',
  upstream: { origin: 'https://api.anthropic.com', keyVariables: ['ANTHROPIC_API_KEY'], authHeader: 'x-api-key' },
  paths: ['POST /v1/messages', `POST ${COUNT_TOKENS}`],
  matches: (request: WireRequest) =>
    request.method === 'POST' && (request.path === '/v1/messages' || request.path === COUNT_TOKENS),
  /**
   * Turn index rule: the number of `assistant` messages in `messages` (role `system` messages are ignored; a
   * message with several blocks counts once).
   */
  sideRequestKind(request: WireRequest): string | null {
    if (request.path === COUNT_TOKENS) return 'count_tokens';
    return isAnthropicJsonSchemaRequest(request.body) ? 'json_schema' : null;
  },
  countModelTurns(body: unknown): number {
    return messages(body).filter((m) => m.role === 'assistant').length;
  },
  lastUserText(body: unknown): string | null {
    const user = messages(body)
      .filter((m) => m.role === 'user')
      .at(-1);
    return user ? contentText(user.content) : null;
  },
  respond(request: WireRequest, turn: RenderedTurn, response: ServerResponse): void {
    if (request.path === COUNT_TOKENS) {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ input_tokens: 10 }));
      return;
    }
    const body = request.body as { model?: unknown; stream?: unknown };
    const model = String(body.model ?? 'scripted');
    const content = contentBlocks(request, turn);
    const stopReason = content.some((block) => block.type === 'tool_use') ? 'tool_use' : 'end_turn';
    const message: Json = {
      id: id('msg'),
      type: 'message',
      role: 'assistant',
      model,
      content,
      stop_reason: stopReason,
      stop_sequence: null,
      usage: usage(),
    };
    if (body.stream !== true) {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(JSON.stringify(message));
      return;
    }
    response.writeHead(200, {
      'content-type': 'text/event-stream',
      'cache-control': 'no-cache',
      connection: 'keep-alive',
    });
    sse(response, {
      type: 'message_start',
      message: { ...message, content: [], stop_reason: null, usage: { ...usage(), output_tokens: 1 } },
    });
    for (const [index, block] of content.entries()) for (const event of blockEvents(block, index)) sse(response, event);
    sse(response, {
      type: 'message_delta',
      delta: { stop_reason: stopReason, stop_sequence: null },
      usage: { output_tokens: 5 },
    });
    sse(response, { type: 'message_stop' });
    response.end();
  },
  respondError(response: ServerResponse, status: number, message: string): void {
    response.writeHead(status, { 'content-type': 'application/json' });
    response.end(JSON.stringify({ type: 'error', error: { type: anthropicErrorType(status), message } }));
  },
};
