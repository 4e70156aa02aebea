/**
 * The Anthropic Messages wire API of the scripted model server, driven with fetch (no engine): the SSE bytes
 * claude reads, the Bash tool_use rendering, thinking blocks, plain JSON for `stream: false`, the Anthropic
 * error shape, side requests (count_tokens, json_schema output) and the history rules.
 */
import { describe, expect, it } from 'vitest';
import {
  anthropicMessagesWire,
  DONE_MARKER,
  sampleFromSchema,
  turns,
  type ModelServer,
} from '../../src/model/index.js';
import { sseEvents, useScriptedServers } from '../helpers/model-server.js';

const serve = useScriptedServers();

async function messages(server: ModelServer, body: unknown, route = '/v1/messages?beta=true'): Promise<Response> {
  return fetch(`${server.url}${route}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': 'sk-ant-x' },
    body: JSON.stringify(body),
  });
}

const user = { role: 'user', content: [{ type: 'text', text: 'hi' }] };
const system = {
  role: 'system',
  content: 'The following skills are available for use with the Skill tool: - demo-hello: says hello',
};
const tools = [
  { name: 'Bash', input_schema: {} },
  { name: 'Skill', input_schema: {} },
];

describe('Anthropic Messages wire API', () => {
  it('answers a text turn as SSE: message_start, block start/delta/stop, message_delta end_turn, message_stop', async () => {
    const server = await serve({ version: 1, turns: [turns.text('hello there')] });
    const response = await messages(server, {
      model: 'claude-opus-4-8',
      stream: true,
      messages: [user, system],
      tools,
    });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toContain('text/event-stream');
    const events = sseEvents(await response.text());
    expect(events.map((e) => e.event)).toEqual([
      'message_start',
      'content_block_start',
      'content_block_delta',
      'content_block_stop',
      'message_delta',
      'message_stop',
    ]);
    for (const e of events) expect(e.data.type).toBe(e.event);
    const [start, blockStart, delta, stop, messageDelta] = events.map((e) => e.data);
    expect(start.message).toMatchObject({
      type: 'message',
      role: 'assistant',
      model: 'claude-opus-4-8',
      content: [],
      stop_reason: null,
    });
    expect(start.message.id).toMatch(/^msg_/);
    expect(start.message.usage).toMatchObject({ input_tokens: 10 });
    expect(blockStart).toEqual({ type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } });
    expect(delta).toEqual({
      type: 'content_block_delta',
      index: 0,
      delta: { type: 'text_delta', text: 'hello there' },
    });
    expect(stop).toEqual({ type: 'content_block_stop', index: 0 });
    expect(messageDelta.delta).toEqual({ stop_reason: 'end_turn', stop_sequence: null });
    expect(server.requests[0]).toMatchObject({
      path: '/v1/messages',
      wire: 'anthropic-messages',
      response_kind: 'text',
      turn_index: 0,
      headers: { 'x-api-key': '[redacted]' },
    });
  });

  it('renders a shell turn as a Bash tool_use with {command, description} in one input_json_delta', async () => {
    const server = await serve({ version: 1, turns: [turns.shell('echo hi > out.txt')] });
    const events = sseEvents(await (await messages(server, { stream: true, messages: [user], tools })).text());
    const blockStart = events.find((e) => e.event === 'content_block_start')!.data;
    expect(blockStart.content_block).toMatchObject({ type: 'tool_use', name: 'Bash', input: {} });
    expect(blockStart.content_block.id).toMatch(/^toolu_/);
    const delta = events.find((e) => e.event === 'content_block_delta')!.data.delta;
    expect(delta.type).toBe('input_json_delta');
    expect(JSON.parse(delta.partial_json)).toEqual({
      command: 'echo hi > out.txt',
      description: 'Run scripted command',
    });
    expect(events.find((e) => e.event === 'message_delta')!.data.delta.stop_reason).toBe('tool_use');
    // Bash is used even when the request offers only other tools.
    const other = sseEvents(
      await (await messages(server, { stream: true, messages: [user], tools: [{ name: 'Read' }] })).text(),
    );
    expect(other.find((e) => e.event === 'content_block_start')!.data.content_block.name).toBe('Bash');
  });

  it('renders a final turn with the done marker, and reasoning as a thinking block (thinking + signature deltas) first', async () => {
    const server = await serve({ version: 1, turns: [turns.final('all done', { reasoning: 'checked the file' })] });
    const events = sseEvents(await (await messages(server, { stream: true, messages: [user] })).text());
    expect(events.map((e) => e.event)).toEqual([
      'message_start',
      'content_block_start',
      'content_block_delta',
      'content_block_delta',
      'content_block_stop',
      'content_block_start',
      'content_block_delta',
      'content_block_stop',
      'message_delta',
      'message_stop',
    ]);
    expect(events[1]!.data).toMatchObject({ index: 0, content_block: { type: 'thinking' } });
    expect(events[2]!.data.delta).toEqual({ type: 'thinking_delta', thinking: 'checked the file' });
    expect(events[3]!.data.delta.type).toBe('signature_delta');
    expect(events[6]!.data).toMatchObject({
      index: 1,
      delta: { type: 'text_delta', text: `all done\n${DONE_MARKER}` },
    });
  });

  it('answers a request without stream:true with a plain JSON message', async () => {
    const server = await serve({ version: 1, turns: [turns.shell('ls')] });
    const response = await messages(server, { model: 'm', messages: [user] });
    expect(response.headers.get('content-type')).toContain('application/json');
    const body = (await response.json()) as any;
    expect(body).toMatchObject({
      type: 'message',
      role: 'assistant',
      model: 'm',
      stop_reason: 'tool_use',
      content: [{ type: 'tool_use', name: 'Bash', input: { command: 'ls', description: 'Run scripted command' } }],
    });
    expect(body.usage).toMatchObject({ input_tokens: 10, output_tokens: 5 });
    const plain = (await (await messages(server, { stream: false, messages: [user] }, '/v1/messages')).json()) as any;
    expect(plain.content[0].name).toBe('Bash');
  });

  it.each([
    [429, 'rate_limit_error'],
    [401, 'authentication_error'],
    [404, 'not_found_error'],
    [400, 'invalid_request_error'],
    [500, 'api_error'],
  ])('answers an error turn %i in the Anthropic error shape (%s)', async (status, type) => {
    const server = await serve({ version: 1, turns: [turns.error(status, 'scripted')] });
    const response = await messages(server, { stream: true, messages: [user] });
    expect(response.status).toBe(status);
    expect(await response.json()).toEqual({ type: 'error', error: { type, message: 'scripted' } });
    expect(server.requests[0]).toMatchObject({ status, response_kind: 'error' });
  });

  it('answers past the last turn with a 400 invalid_request_error naming the exhausted script', async () => {
    const server = await serve({ version: 1, turns: [turns.text('only one')] });
    const response = await messages(server, {
      stream: true,
      messages: [user, { role: 'assistant', content: 'only one' }, user],
    });
    expect(response.status).toBe(400);
    expect(((await response.json()) as any).error).toMatchObject({
      type: 'invalid_request_error',
      message: expect.stringContaining('script exhausted'),
    });
  });

  it('serves count_tokens and json_schema side requests without moving the script', async () => {
    const server = await serve({ version: 1, turns: [turns.shell('ls'), turns.final('done')] });
    const count = await messages(server, { model: 'm', messages: [user] }, '/v1/messages/count_tokens?beta=true');
    expect(await count.json()).toEqual({ input_tokens: 10 });
    const schema = {
      type: 'object',
      properties: { title: { type: 'string' }, n: { type: 'integer' } },
      required: ['title'],
    };
    const title = (await (
      await messages(server, {
        messages: [user, { role: 'assistant', content: 'x' }, user],
        output_config: { format: { type: 'json_schema', schema } },
      })
    ).json()) as any;
    expect(title.stop_reason).toBe('end_turn');
    expect(JSON.parse(title.content[0].text)).toEqual({ title: 'x', n: 0 });
    expect(server.requests.map((r) => [r.response_kind, r.side_kind, r.turn_index])).toEqual([
      ['side', 'count_tokens', null],
      ['side', 'json_schema', null],
    ]);
    // The agent's own first request still gets turn 0.
    const agent = (await (await messages(server, { messages: [user] })).json()) as any;
    expect(agent.content[0]).toMatchObject({ type: 'tool_use', name: 'Bash' });
  });

  it('answers side requests 200 while the script holds an error turn; only the real call gets the error', async () => {
    const server = await serve({ version: 1, turns: [turns.error(500, 'scripted upstream failure')] });
    expect(
      (await messages(server, { model: 'm', messages: [user] }, '/v1/messages/count_tokens?beta=true')).status,
    ).toBe(200);
    const schema = { type: 'object', properties: { title: { type: 'string' } } };
    expect(
      (await messages(server, { messages: [user], output_config: { format: { type: 'json_schema', schema } } })).status,
    ).toBe(200);
    const call = await messages(server, { messages: [user] });
    expect(call.status).toBe(500);
    // Clients that honour it retry at once (1 ms: qwen reads 0 as no hint): a scripted error answers every retry the
    // same way.
    expect(call.headers.get('retry-after-ms')).toBe('1');
    expect(server.requests.map((r) => r.status)).toEqual([200, 200, 500]);
  });

  it('HEAD / (claude warm-up) answers 200', async () => {
    const server = await serve();
    expect((await fetch(`${server.url}/`, { method: 'HEAD' })).status).toBe(200);
  });
});

describe('Anthropic Messages history rules', () => {
  const assistantTool = {
    role: 'assistant',
    content: [
      { type: 'thinking', thinking: 't', signature: 's' },
      { type: 'tool_use', id: 'toolu_1', name: 'Bash', input: {} },
    ],
  };
  const toolResult = { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'ok' }] };

  it('counts assistant messages once each and ignores system messages', () => {
    const count = (m: unknown) => anthropicMessagesWire.countModelTurns({ messages: m });
    expect(count(undefined)).toBe(0);
    expect(count([user, system])).toBe(0);
    expect(count([user, system, assistantTool, toolResult])).toBe(1);
    expect(count([user, system, assistantTool, toolResult, { role: 'assistant', content: 'done' }, system, user])).toBe(
      2,
    );
    const sideKind = (body: unknown, path = '/v1/messages') =>
      anthropicMessagesWire.sideRequestKind!({ method: 'POST', path, query: new URLSearchParams(), headers: {}, body });
    expect(sideKind({ messages: [user, assistantTool], output_config: { format: { type: 'json_schema' } } })).toBe(
      'json_schema',
    );
    expect(sideKind({ messages: [user] }, '/v1/messages/count_tokens')).toBe('count_tokens');
    expect(sideKind({ messages: [user, assistantTool] })).toBeNull();
  });

  it('finds the last user text (string or text blocks), skipping tool results', () => {
    expect(anthropicMessagesWire.lastUserText({ messages: [user, assistantTool, toolResult] })).toBe('');
    expect(anthropicMessagesWire.lastUserText({ messages: [{ role: 'user', content: 'plain' }, system] })).toBe(
      'plain',
    );
    expect(anthropicMessagesWire.lastUserText({ messages: [system] })).toBeNull();
    expect(
      anthropicMessagesWire.lastUserText({
        messages: [
          {
            role: 'user',
            content: [
              { type: 'text', text: 'a' },
              { type: 'text', text: 'b' },
            ],
          },
        ],
      }),
    ).toBe('a\nb');
  });

  it('builds minimal values from JSON schemas', () => {
    expect(
      sampleFromSchema({
        type: 'object',
        properties: { a: { type: 'string' }, b: { type: 'array' }, c: { enum: ['x', 'y'] }, d: { type: 'boolean' } },
      }),
    ).toEqual({ a: 'x', b: [], c: 'x', d: false });
    expect(sampleFromSchema(undefined)).toBe('x');
  });
});
