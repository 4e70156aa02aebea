/**
 * OpenAI Responses API (`POST /v1/responses`), as codex 0.169.0 speaks it with a custom provider
 * (`wire_api = "responses"`). SSE events sent: response.created, response.output_item.added,
 * response.output_text.delta (text), response.output_item.done, response.completed with usage. The minimal
 * sequence codex accepts is output_item.done + completed (shared/research/codex-claude.md §3); the others are
 * sent so streaming consumers see deltas. A shell call is a `function_call` to the shell tool of the engine's tool
 * table (`src/engines/<id>/tools.ts`) that the request offers.
 */
import { randomBytes } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import { finalText, nativeIntentCall, type ContentTurn } from './script.js';
import { shellToolCall } from './tool-table.js';
import type { WireApiHandler, WireRequest } from './wire-api.js';

type Item = Record<string, unknown>;
type RenderedTurn = ContentTurn;

/** A random item id with the vendor's prefix (`resp_`, `msg_`, `fc_`, `call_`, `rs_`). */
function id(prefix: string): string {
  return `${prefix}_${randomBytes(8).toString('hex')}`;
}

/**
 * Names of the tools the request offers (Responses `{name}` or Chat-style `{function: {name}}`), plus the MCP
 * namespaces codex 0.169 lists in its input instead (`<tools>Deferred tool namespaces:\n- mcp__echo`).
 */
function toolNames(body: unknown): string[] {
  const tools = (body as { tools?: unknown }).tools;
  const deferred = [
    ...JSON.stringify((body as { input?: unknown }).input ?? '').matchAll(/\\n- (mcp__[A-Za-z0-9_-]+)/g),
  ].map((m) => m[1]!);
  if (!Array.isArray(tools)) return deferred;
  return [
    ...deferred,
    ...tools
      .map(
        (tool) =>
          (tool as { name?: unknown; function?: { name?: unknown } }).name ??
          (tool as { function?: { name?: unknown } }).function?.name,
      )
      .filter((name): name is string => typeof name === 'string'),
  ];
}

/** Output items for a turn: an optional reasoning item, then the message or the function call. */
function outputItems(turn: RenderedTurn, request: WireRequest): Item[] {
  const body = request.body;
  const items: Item[] = [];
  if ((turn.type === 'text' || turn.type === 'final') && turn.reasoning) {
    items.push({ type: 'reasoning', id: id('rs'), summary: [{ type: 'summary_text', text: turn.reasoning }] });
  }
  if (turn.type === 'shell') {
    const names = toolNames(body);
    const { name, args } =
      nativeIntentCall(turn, names, request.tools ?? [], null) ??
      shellToolCall(request.tools ?? [], names, turn.command);
    // A tool of a deferred namespace is called as `{namespace: "mcp__<server>", name: "<tool>"}`.
    const namespace = names.find((n) => n.startsWith('mcp__') && name.startsWith(`${n}__`) && !names.includes(name));
    const callee = namespace ? { namespace, name: name.slice(namespace.length + 2) } : { name };
    items.push({
      type: 'function_call',
      id: id('fc'),
      call_id: id('call'),
      ...callee,
      arguments: JSON.stringify(args),
      status: 'completed',
    });
  } else {
    const text = turn.type === 'final' ? finalText(turn) : turn.text;
    items.push({
      type: 'message',
      id: id('msg'),
      role: 'assistant',
      status: 'completed',
      content: [{ type: 'output_text', text, annotations: [] }],
    });
  }
  return items;
}

/** The request's `input` as a list of items (empty when absent or a plain string). */
function inputItems(body: unknown): Array<{ type?: unknown; role?: unknown; content?: unknown }> {
  const input = (body as { input?: unknown } | null)?.input;
  return Array.isArray(input) ? input.filter((item): item is Item => typeof item === 'object' && item !== null) : [];
}

/** Fixed token counts: codex needs `usage` on response.completed, the numbers are not asserted on. */
function usage(): Item {
  return {
    input_tokens: 10,
    input_tokens_details: { cached_tokens: 0 },
    output_tokens: 5,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: 15,
  };
}

/** One SSE event, `event: <type>` + `data: <json>`, exactly as in shared/research/samples. */
function sse(response: ServerResponse, event: Item): void {
  response.write(`event: ${String(event.type)}\ndata: ${JSON.stringify(event)}\n\n`);
}

/** The Responses API handler. */
export const openAiResponsesWire: WireApiHandler = {
  id: 'openai-responses',
  paths: ['POST /v1/responses', 'POST /responses'],
  matches: (request: WireRequest) =>
    request.method === 'POST' && (request.path === '/v1/responses' || request.path === '/responses'),
  /**
   * Turn index rule for the Responses API: count the `input` items that are model outputs, i.e.
   * `function_call` (and `custom_tool_call`, codex's freeform tools) and `message` with role `assistant`
   * (an EasyInputMessage without `type` counts too). `reasoning` items do not count: they ride along with a
   * message or call of the same turn. `input` given as a plain string is a first turn.
   */
  countModelTurns(body: unknown): number {
    return inputItems(body).filter(
      (it) =>
        it.type === 'function_call' ||
        it.type === 'custom_tool_call' ||
        ((it.type === 'message' || it.type === undefined) && it.role === 'assistant'),
    ).length;
  },
  lastUserText(body: unknown): string | null {
    const input = (body as { input?: unknown } | null)?.input;
    if (typeof input === 'string') return input;
    const user = inputItems(body)
      .filter((it) => (it.type === 'message' || it.type === undefined) && it.role === 'user')
      .at(-1);
    if (!user) return null;
    if (typeof user.content === 'string') return user.content;
    if (!Array.isArray(user.content)) return null;
    return user.content
      .map((part) => (part as { text?: unknown }).text)
      .filter((text): text is string => typeof text === 'string')
      .join('\n');
  },
  respond(request: WireRequest, turn: RenderedTurn, response: ServerResponse): void {
    const model = String((request.body as { model?: unknown }).model ?? 'scripted');
    const items = outputItems(turn, request);
    const responseId = id('resp');
    const createdAt = Math.floor(Date.now() / 1000);
    const completed = {
      id: responseId,
      object: 'response',
      created_at: createdAt,
      status: 'completed',
      model,
      output: items,
      usage: usage(),
    };
    if ((request.body as { stream?: unknown }).stream === false) {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(JSON.stringify(completed));
      return;
    }
    response.writeHead(200, {
      'content-type': 'text/event-stream',
      'cache-control': 'no-cache',
      connection: 'keep-alive',
    });
    // Same fields as response.completed minus usage, as the real API sends (shared/research/samples).
    const { usage: _usage, ...inProgress } = completed;
    sse(response, { type: 'response.created', response: { ...inProgress, status: 'in_progress', output: [] } });
    items.forEach((item, index) => {
      const added =
        item.type === 'message'
          ? { ...item, status: 'in_progress', content: [] }
          : item.type === 'reasoning'
            ? { ...item, summary: [] }
            : { ...item, status: 'in_progress' };
      sse(response, { type: 'response.output_item.added', output_index: index, item: added });
      if (item.type === 'message') {
        const text = ((item.content as Item[])[0]?.text as string | undefined) ?? '';
        sse(response, {
          type: 'response.output_text.delta',
          item_id: item.id,
          output_index: index,
          content_index: 0,
          delta: text,
        });
      }
      sse(response, { type: 'response.output_item.done', output_index: index, item });
    });
    sse(response, { type: 'response.completed', response: completed });
    response.end();
  },
  respondError(response: ServerResponse, status: number, message: string, type: string): void {
    response.writeHead(status, { 'content-type': 'application/json' });
    response.end(JSON.stringify({ error: { message, type, code: type, param: null } }));
  },
};
