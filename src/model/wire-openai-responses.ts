/**
 * OpenAI Responses API (`POST /v1/responses`), as codex 0.169.0 speaks it with a custom provider
 * (`wire_api = "responses"`) and as the official `openai` client reads it (`responses.create`, plain or with
 * `stream: true`, and `responses.stream()`). With `stream: true` the answer is the API's SSE event sequence
 * (`event: <type>` + `data: <json>` with a `sequence_number`): response.created, response.in_progress, per output
 * item output_item.added, its parts (content_part / output_text, reasoning_summary_part / reasoning_summary_text,
 * function_call_arguments: added, delta, done), output_item.done, then response.completed with the whole response
 * and usage. The minimal sequence codex accepts is output_item.done + completed (shared/research/codex-claude.md
 * §3); the SDK's stream helper needs the rest. Without `stream: true` (the SDK omits it) a plain Response JSON is
 * answered. A shell call is a `function_call` to the shell tool of the engine's tool table
 * (`src/engines/<id>/facts.ts`) that the request offers.
 */
import { randomBytes } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import { finalText, nativeIntentCall } from './script-turns.js';
import type { ContentTurn } from './script.js';
import { POLL_CALL_PREFIX, shellToolCall } from './tool-table.js';
import type { PendingPoll, WireApiHandler, WireRequest } from './wire-api.js';

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
      content: [{ type: 'output_text', text, annotations: [], logprobs: [] }],
    });
  }
  return items;
}

/** The request's `input` as a list of items (empty when absent or a plain string). */
function inputItems(
  body: unknown,
): Array<{ type?: unknown; role?: unknown; content?: unknown; call_id?: unknown; output?: unknown }> {
  const input = (body as { input?: unknown } | null)?.input;
  return Array.isArray(input) ? input.filter((item): item is Item => typeof item === 'object' && item !== null) : [];
}

/** True for a poll this server made (its call id says so): not a script turn. */
function isPoll(item: { type?: unknown; call_id?: unknown }): boolean {
  return item.type === 'function_call' && typeof item.call_id === 'string' && item.call_id.startsWith(POLL_CALL_PREFIX);
}

/** True for an input item that is a model output of a script turn (see `countModelTurns`). */
function isModelTurn(it: { type?: unknown; role?: unknown; call_id?: unknown }): boolean {
  return (
    (it.type === 'function_call' && !isPoll(it)) ||
    it.type === 'custom_tool_call' ||
    ((it.type === 'message' || it.type === undefined) && it.role === 'assistant')
  );
}

/**
 * The poll a request calls for: its last input item is a `function_call_output` saying the process still runs
 * (`poll.running` of a tool table of the request), answering a script's shell call or one of this server's polls.
 * The turn index is that shell call's; the polls are those made since it.
 */
function pendingPoll(request: WireRequest): PendingPoll | null {
  const items = inputItems(request.body);
  const last = items.at(-1);
  if (last?.type !== 'function_call_output' || typeof last.output !== 'string') return null;
  const output = last.output;
  let poll: PendingPoll['poll'] | undefined;
  let sessionId = 0;
  for (const table of request.tools ?? []) {
    const match = table.poll?.running.exec(output);
    if (match) {
      poll = table.poll;
      sessionId = Number(match[1]);
      break;
    }
  }
  if (!poll || !Number.isSafeInteger(sessionId)) return null;
  const callAt = items.findLastIndex((it) => it.type === 'function_call' && it.call_id === last.call_id);
  if (callAt < 0) return null;
  // The shell call is the last script call at or before the answered one; the polls since then follow it.
  let shellAt = callAt;
  while (shellAt >= 0 && !(items[shellAt]!.type === 'function_call' && !isPoll(items[shellAt]!))) shellAt -= 1;
  if (shellAt < 0) return null;
  return {
    poll,
    sessionId,
    turnIndex: items.slice(0, shellAt).filter(isModelTurn).length,
    polls: items.slice(shellAt).filter(isPoll).length,
  };
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

/** The Response object of a finished turn, the fields of the API reference's `Response`. */
function responseObject(request: WireRequest, output: Item[]): Item {
  const body = request.body as { model?: unknown; instructions?: unknown; tools?: unknown; metadata?: unknown };
  return {
    id: id('resp'),
    object: 'response',
    created_at: Math.floor(Date.now() / 1000),
    status: 'completed',
    error: null,
    incomplete_details: null,
    instructions: typeof body.instructions === 'string' ? body.instructions : null,
    metadata: typeof body.metadata === 'object' && body.metadata !== null ? body.metadata : {},
    model: String(body.model ?? 'scripted'),
    output,
    parallel_tool_calls: true,
    temperature: 1,
    tool_choice: 'auto',
    tools: Array.isArray(body.tools) ? body.tools : [],
    top_p: 1,
    usage: usage(),
  };
}

/**
 * The SSE events of a finished response, in the API's order (without `sequence_number`): response.created and
 * response.in_progress (no output, no usage), then per output item output_item.added with the item empty, its
 * parts (reasoning: reasoning_summary_part.added, reasoning_summary_text.delta/.done, reasoning_summary_part.done;
 * message: content_part.added, output_text.delta/.done, content_part.done; function call:
 * function_call_arguments.delta/.done), output_item.done with the whole item, and response.completed.
 */
function streamEvents(completed: Item): Item[] {
  const { usage: _usage, ...rest } = completed;
  const inProgress = { ...rest, status: 'in_progress', output: [], usage: null };
  const events: Item[] = [
    { type: 'response.created', response: inProgress },
    { type: 'response.in_progress', response: inProgress },
  ];
  (completed.output as Item[]).forEach((item, index) => {
    const at = { item_id: item.id, output_index: index };
    if (item.type === 'reasoning') {
      events.push({ type: 'response.output_item.added', output_index: index, item: { ...item, summary: [] } });
      (item.summary as Item[]).forEach((part, summaryIndex) => {
        const text = String(part.text);
        const where = { ...at, summary_index: summaryIndex };
        events.push(
          { type: 'response.reasoning_summary_part.added', ...where, part: { type: 'summary_text', text: '' } },
          { type: 'response.reasoning_summary_text.delta', ...where, delta: text },
          { type: 'response.reasoning_summary_text.done', ...where, text },
          { type: 'response.reasoning_summary_part.done', ...where, part },
        );
      });
    } else if (item.type === 'message') {
      events.push({
        type: 'response.output_item.added',
        output_index: index,
        item: { ...item, status: 'in_progress', content: [] },
      });
      (item.content as Item[]).forEach((part, contentIndex) => {
        const text = String(part.text);
        const where = { ...at, content_index: contentIndex };
        events.push(
          { type: 'response.content_part.added', ...where, part: { ...part, text: '' } },
          { type: 'response.output_text.delta', ...where, delta: text, logprobs: [] },
          { type: 'response.output_text.done', ...where, text, logprobs: [] },
          { type: 'response.content_part.done', ...where, part },
        );
      });
    } else {
      const args = String(item.arguments);
      events.push(
        {
          type: 'response.output_item.added',
          output_index: index,
          item: { ...item, status: 'in_progress', arguments: '' },
        },
        { type: 'response.function_call_arguments.delta', ...at, delta: args },
        { type: 'response.function_call_arguments.done', ...at, name: item.name, arguments: args },
      );
    }
    events.push({ type: 'response.output_item.done', output_index: index, item });
  });
  events.push({ type: 'response.completed', response: completed });
  return events;
}

/** The Responses API handler. */
export const openAiResponsesWire: WireApiHandler = {
  id: 'openai-responses',
  // codex reads its key from OPENAI_API_KEY, or CODEX_API_KEY (codex-rs `login`), and sends it as a bearer token.
  upstream: {
    origin: 'https://api.openai.com',
    keyVariables: ['OPENAI_API_KEY', 'CODEX_API_KEY'],
    authHeader: 'authorization',
  },
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
    return inputItems(body).filter(isModelTurn).length;
  },
  pendingPoll,
  respondPoll(request: WireRequest, pending: PendingPoll, response: ServerResponse): void {
    const call: Item = {
      type: 'function_call',
      id: id('fc'),
      call_id: id(POLL_CALL_PREFIX.slice(0, -1)),
      name: pending.poll.tool,
      arguments: JSON.stringify({ [pending.poll.sessionKey]: pending.sessionId, ...pending.poll.args }),
      status: 'completed',
    };
    writeResponse(request, responseObject(request, [call]), response);
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
    writeResponse(request, responseObject(request, outputItems(turn, request)), response);
  },
  respondError(response: ServerResponse, status: number, message: string, type: string): void {
    response.writeHead(status, { 'content-type': 'application/json' });
    response.end(JSON.stringify({ error: { message, type, code: type, param: null } }));
  },
};

/** Writes a finished response: a JSON body, or its SSE events when the request asked for a stream. */
function writeResponse(request: WireRequest, completed: Item, response: ServerResponse): void {
  // Streamed only when asked: the official client omits `stream` on a plain `responses.create` and parses JSON.
  if ((request.body as { stream?: unknown }).stream !== true) {
    response.writeHead(200, { 'content-type': 'application/json' });
    response.end(JSON.stringify(completed));
    return;
  }
  response.writeHead(200, {
    'content-type': 'text/event-stream',
    'cache-control': 'no-cache',
    connection: 'keep-alive',
  });
  let sequence = 0;
  for (const event of streamEvents(completed)) sse(response, { ...event, sequence_number: sequence++ });
  response.end();
}
