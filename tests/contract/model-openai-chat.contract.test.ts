/**
 * The OpenAI Chat Completions wire API of the scripted model server, driven with fetch (no engine): the SSE
 * chunks opencode reads, streamed tool-call arguments, plain JSON, the error shape, history rules and the
 * title side request.
 */
import { describe, expect, it } from 'vitest';
import { CHAT_SIDE_TITLE, DONE_MARKER, openAiChatWire, turns, type ModelServer } from '../../src/model/index.js';
import { useScriptedServers } from '../helpers/model-server.js';

const serve = useScriptedServers();

async function chat(server: ModelServer, body: unknown, route = '/v1/chat/completions'): Promise<Response> {
  return fetch(`${server.url}${route}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
}

/** Parses `data: …` SSE blocks; the last must be `[DONE]`. */
function chunks(text: string): any[] {
  const blocks = text.split('\n\n').filter(Boolean);
  for (const block of blocks) expect(block).toMatch(/^data: /);
  expect(blocks.at(-1)).toBe('data: [DONE]');
  return blocks.slice(0, -1).map((b) => JSON.parse(b.slice('data: '.length)));
}

const bashTool = { type: 'function', function: { name: 'bash', description: 'run', parameters: { type: 'object' } } };
const user = [
  { role: 'system', content: 'You are opencode.' },
  { role: 'user', content: 'hi' },
];

describe('OpenAI Chat wire API', () => {
  it('streams a text turn as chat.completion.chunk deltas, finish stop, usage chunk, [DONE]', async () => {
    const server = await serve({ version: 1, turns: [turns.text('hello there')] });
    const response = await chat(server, {
      model: 'scripted',
      stream: true,
      stream_options: { include_usage: true },
      messages: user,
    });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toContain('text/event-stream');
    const list = chunks(await response.text());
    for (const c of list) expect(c).toMatchObject({ object: 'chat.completion.chunk', model: 'scripted' });
    expect(list.map((c) => c.choices[0]?.delta?.content ?? '').join('')).toBe('hello there');
    expect(list.find((c) => c.choices[0]?.finish_reason)?.choices[0].finish_reason).toBe('stop');
    expect(list.at(-1)).toMatchObject({
      choices: [],
      usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
    });
    expect(server.requests[0]).toMatchObject({ wire: 'openai-chat', turn_index: 0, response_kind: 'text' });
  });

  it('omits the usage chunk unless stream_options.include_usage', async () => {
    const server = await serve({ version: 1, turns: [turns.text('x')] });
    const list = chunks(await (await chat(server, { model: 'm', stream: true, messages: user })).text());
    expect(list.every((c) => c.usage === undefined)).toBe(true);
  });

  it('streams a shell turn as a bash tool call in ≥2 argument pieces with finish tool_calls', async () => {
    const server = await serve({ version: 1, turns: [turns.shell('echo hi > out.txt')] });
    const list = chunks(
      await (await chat(server, { model: 'm', stream: true, messages: user, tools: [bashTool] })).text(),
    );
    const calls = list.flatMap((c) => c.choices[0]?.delta?.tool_calls ?? []);
    expect(calls.length).toBeGreaterThanOrEqual(2);
    expect(calls[0]).toMatchObject({ index: 0, type: 'function', function: { name: 'bash' } });
    expect(calls[0].id).toMatch(/^call_/);
    for (const c of calls) expect(c.index).toBe(0);
    expect(JSON.parse(calls.map((c) => c.function.arguments).join(''))).toEqual({
      command: 'echo hi > out.txt',
      description: expect.any(String),
    });
    expect(list.find((c) => c.choices[0]?.finish_reason)?.choices[0].finish_reason).toBe('tool_calls');
  });

  it('answers plain JSON without stream, final turns carry the done marker', async () => {
    const server = await serve({ version: 1, turns: [turns.final('All done.')] });
    const response = await chat(server, { model: 'm', messages: user }, '/chat/completions');
    expect(response.headers.get('content-type')).toContain('application/json');
    const body: any = await response.json();
    expect(body).toMatchObject({
      object: 'chat.completion',
      choices: [
        { index: 0, finish_reason: 'stop', message: { role: 'assistant', content: `All done.\n${DONE_MARKER}` } },
      ],
      usage: { total_tokens: 15 },
    });
  });

  it('renders plain-JSON tool calls too', async () => {
    const server = await serve({ version: 1, turns: [turns.shell('ls')] });
    const body: any = await (await chat(server, { model: 'm', messages: user, tools: [bashTool] })).json();
    expect(body.choices[0]).toMatchObject({
      finish_reason: 'tool_calls',
      message: { tool_calls: [{ type: 'function', function: { name: 'bash' } }] },
    });
    expect(JSON.parse(body.choices[0].message.tool_calls[0].function.arguments).command).toBe('ls');
  });

  it('counts assistant messages as model turns and reads the last user text', async () => {
    const history = [
      ...user,
      { role: 'assistant', content: null, tool_calls: [] },
      { role: 'tool', content: 'ok' },
      { role: 'assistant', content: 'x' },
      { role: 'user', content: [{ type: 'text', text: 'next' }] },
    ];
    expect(openAiChatWire.countModelTurns({ messages: history })).toBe(2);
    expect(openAiChatWire.lastUserText({ messages: history })).toBe('next');
    expect(openAiChatWire.countModelTurns({})).toBe(0);
    expect(openAiChatWire.lastUserText({})).toBeNull();
    const server = await serve({ version: 1, turns: [turns.text('a'), turns.text('b'), turns.text('third')] });
    const list = chunks(await (await chat(server, { model: 'm', stream: true, messages: history })).text());
    expect(list.map((c) => c.choices[0]?.delta?.content ?? '').join('')).toBe('third');
  });

  it('answers the title side request with a short title, whatever the script turn is', async () => {
    const server = await serve({ version: 1, turns: [turns.shell('rm -rf nothing')] });
    const title = {
      model: 'm',
      stream: true,
      messages: [
        { role: 'system', content: 'You are a title generator. You output ONLY a thread title.' },
        { role: 'user', content: 'Generate a title' },
        { role: 'user', content: 'hi' },
      ],
    };
    const list = chunks(await (await chat(server, title)).text());
    expect(list.map((c) => c.choices[0]?.delta?.content ?? '').join('')).toBe(CHAT_SIDE_TITLE);
    expect(list.flatMap((c) => c.choices[0]?.delta?.tool_calls ?? [])).toEqual([]);
    expect(server.requests[0]).toMatchObject({
      response_kind: 'side',
      side_kind: 'title',
      turn_index: null,
      status: 200,
    });
  });

  it('answers scripted errors and an exhausted script in the OpenAI error shape', async () => {
    const server = await serve({ version: 1, turns: [turns.error(429, 'slow down')] });
    const response = await chat(server, { model: 'm', stream: true, messages: user });
    expect(response.status).toBe(429);
    expect(await response.json()).toEqual({
      error: { message: 'slow down', type: 'rate_limit_exceeded', param: null, code: 'rate_limit_exceeded' },
    });
    const exhausted = await chat(server, { model: 'm', messages: [...user, { role: 'assistant', content: 'x' }] });
    expect(exhausted.status).toBe(400);
    expect(((await exhausted.json()) as any).error.message).toContain('script exhausted');
  });
});
