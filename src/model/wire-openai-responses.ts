/**
 * OpenAI Responses API (`POST /v1/responses`), as codex 0.169.0 speaks it with a custom provider
 * (`wire_api = "responses"`). SSE events sent: response.created, response.output_item.added,
 * response.output_text.delta (text), response.output_item.done, response.completed with usage. The minimal
 * sequence codex accepts is output_item.done + completed (shared/research/codex-claude.md §3); the others are
 * sent so streaming consumers see deltas. A shell call is a `function_call` to `exec_command` with
 * `{"cmd": …}` (codex 0.169); `shell` with `{"command": ["bash","-lc",…]}` when only that tool is offered.
 */
import { randomBytes } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import { finalText, type ModelTurn } from './script.js';
import type { WireApiHandler, WireRequest } from './wire-api.js';

type Item = Record<string, unknown>;

function id(prefix: string): string {
  return `${prefix}_${randomBytes(8).toString('hex')}`;
}

function toolNames(body: unknown): string[] {
  const tools = (body as { tools?: unknown }).tools;
  if (!Array.isArray(tools)) return [];
  return tools.map((tool) => (tool as { name?: unknown; function?: { name?: unknown } }).name ?? (tool as { function?: { name?: unknown } }).function?.name).filter((name): name is string => typeof name === 'string');
}

/** Output items for a turn. */
function outputItems(turn: ModelTurn, body: unknown): Item[] {
  const items: Item[] = [];
  if ((turn.type === 'text' || turn.type === 'final') && turn.reasoning) {
    items.push({ type: 'reasoning', id: id('rs'), summary: [{ type: 'summary_text', text: turn.reasoning }] });
  }
  if (turn.type === 'shell') {
    const names = toolNames(body);
    const useShell = !names.includes('exec_command') && names.includes('shell');
    const args = useShell ? { command: ['bash', '-lc', turn.command] } : { cmd: turn.command };
    items.push({ type: 'function_call', id: id('fc'), call_id: id('call'), name: useShell ? 'shell' : 'exec_command', arguments: JSON.stringify(args), status: 'completed' });
  } else if (turn.type === 'text' || turn.type === 'final') {
    const text = turn.type === 'final' ? finalText(turn) : turn.text;
    items.push({ type: 'message', id: id('msg'), role: 'assistant', status: 'completed', content: [{ type: 'output_text', text, annotations: [] }] });
  }
  return items;
}

function usage(): Item {
  return { input_tokens: 10, input_tokens_details: { cached_tokens: 0 }, output_tokens: 5, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 15 };
}

function sse(response: ServerResponse, event: Item): void {
  response.write(`event: ${String(event.type)}\ndata: ${JSON.stringify(event)}\n\n`);
}

/** The Responses API handler. */
export const openAiResponsesWire: WireApiHandler = {
  id: 'openai-responses',
  paths: ['POST /v1/responses', 'POST /responses'],
  matches: (request: WireRequest) => request.method === 'POST' && (request.path === '/v1/responses' || request.path === '/responses'),
  countModelTurns(body: unknown): number {
    const input = (body as { input?: unknown }).input;
    if (!Array.isArray(input)) return 0;
    return input.filter((item) => {
      const it = item as { type?: unknown; role?: unknown };
      return it.type === 'function_call' || it.type === 'custom_tool_call' || (it.type === 'message' && it.role === 'assistant') || (it.type === undefined && it.role === 'assistant');
    }).length;
  },
  respond(request: WireRequest, turn: ModelTurn, response: ServerResponse): void {
    const model = String((request.body as { model?: unknown }).model ?? 'scripted');
    const items = outputItems(turn, request.body);
    const responseId = id('resp');
    const created = Math.floor(Date.now() / 1000);
    const completed = { id: responseId, object: 'response', created_at: created, status: 'completed', model, output: items, usage: usage() };
    if ((request.body as { stream?: unknown }).stream === false) {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(JSON.stringify(completed));
      return;
    }
    response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
    sse(response, { type: 'response.created', response: { ...completed, status: 'in_progress', output: [], usage: null } });
    items.forEach((item, index) => {
      const inProgress = item.type === 'message' ? { ...item, status: 'in_progress', content: [] } : { ...item, status: 'in_progress' };
      sse(response, { type: 'response.output_item.added', output_index: index, item: inProgress });
      if (item.type === 'message') {
        const text = ((item.content as Item[])[0]?.text as string | undefined) ?? '';
        sse(response, { type: 'response.output_text.delta', item_id: item.id, output_index: index, content_index: 0, delta: text });
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
