/**
 * The OpenAI Responses wire API of the scripted model server, driven with fetch (no engine): the SSE bytes
 * codex reads, tool-call rendering, non-stream JSON, the error shape, and the history rules.
 */
import { describe, expect, it } from 'vitest';
import { DONE_MARKER, openAiResponsesWire, turns, type ModelServer } from '../../src/model/index.js';
import { sseEvents, useScriptedServers } from '../helpers/model-server.js';

const serve = useScriptedServers();

function doneItems(events: Array<{ event: string; data: any }>): any[] {
  return events.filter((e) => e.event === 'response.output_item.done').map((e) => e.data.item);
}

async function responses(server: ModelServer, body: unknown, route = '/v1/responses'): Promise<Response> {
  return fetch(`${server.url}${route}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
}

const userInput = [{ type: 'message', role: 'user', content: [{ type: 'input_text', text: 'hi' }] }];

describe('OpenAI Responses wire API', () => {
  it('answers a text turn as SSE: created, in_progress, item added, content part, text delta/done, item done, completed with usage', async () => {
    const server = await serve({ version: 1, turns: [turns.text('hello there')] });
    const response = await responses(server, { model: 'gpt-5.5', stream: true, input: userInput });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toContain('text/event-stream');
    const events = sseEvents(await response.text());
    expect(events.map((e) => e.event)).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.content_part.added',
      'response.output_text.delta',
      'response.output_text.done',
      'response.content_part.done',
      'response.output_item.done',
      'response.completed',
    ]);
    for (const e of events) expect(e.data.type).toBe(e.event);
    expect(events.map((e) => e.data.sequence_number)).toEqual(events.map((_, i) => i));
    const [created, , added, partAdded, delta, textDone, partDone, done, completed] = events.map((e) => e.data);
    expect(created.response).toMatchObject({ object: 'response', status: 'in_progress', model: 'gpt-5.5', output: [] });
    expect(created.response.id).toMatch(/^resp_/);
    expect(added.item).toMatchObject({ type: 'message', role: 'assistant', status: 'in_progress', content: [] });
    const at = { item_id: added.item.id, output_index: 0, content_index: 0 };
    expect(partAdded).toMatchObject({ ...at, part: { type: 'output_text', text: '' } });
    expect(delta).toMatchObject({ ...at, delta: 'hello there' });
    expect(textDone).toMatchObject({ ...at, text: 'hello there' });
    expect(partDone).toMatchObject({ ...at, part: { type: 'output_text', text: 'hello there' } });
    expect(done.item).toEqual({
      type: 'message',
      id: added.item.id,
      role: 'assistant',
      status: 'completed',
      content: [{ type: 'output_text', text: 'hello there', annotations: [], logprobs: [] }],
    });
    expect(completed.response).toMatchObject({ id: created.response.id, status: 'completed', output: [done.item] });
    expect(completed.response.usage).toEqual({
      input_tokens: 10,
      input_tokens_details: { cached_tokens: 0 },
      output_tokens: 5,
      output_tokens_details: { reasoning_tokens: 0 },
      total_tokens: 15,
    });
  });

  it('renders a shell turn as an exec_command function_call with {cmd}', async () => {
    const server = await serve({ version: 1, turns: [turns.shell('echo hi > out.txt')] });
    const events = sseEvents(
      await (
        await responses(server, {
          stream: true,
          input: userInput,
          tools: [
            { type: 'function', name: 'exec_command' },
            { type: 'function', name: 'shell' },
          ],
        })
      ).text(),
    );
    expect(events.map((e) => e.event)).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.function_call_arguments.delta',
      'response.function_call_arguments.done',
      'response.output_item.done',
      'response.completed',
    ]);
    const [call] = doneItems(events);
    expect(call).toMatchObject({ type: 'function_call', name: 'exec_command', status: 'completed' });
    expect(call.id).toMatch(/^fc_/);
    expect(call.call_id).toMatch(/^call_/);
    expect(JSON.parse(call.arguments)).toEqual({ cmd: 'echo hi > out.txt' });
    expect(events[2]!.data.item).toMatchObject({
      type: 'function_call',
      call_id: call.call_id,
      status: 'in_progress',
      arguments: '',
    });
    expect(events[4]!.data).toMatchObject({ item_id: call.id, name: 'exec_command', arguments: call.arguments });
  });

  it('uses the older shell tool (argv) when the request offers shell but not exec_command', async () => {
    const server = await serve({ version: 1, turns: [turns.shell('echo hi > out.txt')] });
    const [legacy] = doneItems(
      sseEvents(
        await (
          await responses(server, { stream: true, input: userInput, tools: [{ type: 'function', name: 'shell' }] })
        ).text(),
      ),
    );
    expect(legacy.name).toBe('shell');
    expect(JSON.parse(legacy.arguments)).toEqual({ command: ['bash', '-lc', 'echo hi > out.txt'] });
    const [fallback] = doneItems(sseEvents(await (await responses(server, { stream: true, input: userInput })).text()));
    expect(fallback.name).toBe('exec_command');
  });

  it('renders a final turn with the done marker line, and reasoning as a reasoning item first', async () => {
    const server = await serve({ version: 1, turns: [turns.final('all done', { reasoning: 'checked the file' })] });
    const events = sseEvents(await (await responses(server, { stream: true, input: userInput })).text());
    const [reasoning, message] = doneItems(events);
    expect(reasoning).toMatchObject({
      type: 'reasoning',
      summary: [{ type: 'summary_text', text: 'checked the file' }],
    });
    expect(message.content[0].text).toBe(`all done\n${DONE_MARKER}`);
    expect(events.at(-1)!.data.response.output.map((item: any) => item.type)).toEqual(['reasoning', 'message']);
  });

  it('answers stream:false with a plain JSON response object', async () => {
    const server = await serve({ version: 1, turns: [turns.text('plain')] });
    const response = await responses(server, { stream: false, input: userInput });
    expect(response.headers.get('content-type')).toContain('application/json');
    const body = (await response.json()) as any;
    expect(body).toMatchObject({
      object: 'response',
      status: 'completed',
      output: [{ type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'plain' }] }],
    });
    expect(body.usage.total_tokens).toBe(15);
  });

  it('also serves POST /responses (base_url without /v1)', async () => {
    const server = await serve({ version: 1, turns: [turns.text('no v1')] });
    const [message] = doneItems(
      sseEvents(await (await responses(server, { stream: true, input: userInput }, '/responses')).text()),
    );
    expect(message.content[0].text).toBe('no v1');
    expect(server.requests[0]).toMatchObject({ path: '/responses', wire: 'openai-responses', response_kind: 'text' });
  });

  it('answers error turns with their status and {"error":{message,type,code}}', async () => {
    const server = await serve({ version: 1, turns: [turns.error(429, 'slow down')] });
    const response = await responses(server, { stream: true, input: userInput });
    expect(response.status).toBe(429);
    expect(response.headers.get('content-type')).toContain('application/json');
    // The smallest positive wait: clients that honour it retry at once (qwen reads 0 as no hint and backs off ~80 s).
    expect(response.headers.get('retry-after-ms')).toBe('1');
    expect(await response.json()).toEqual({
      error: { message: 'slow down', type: 'rate_limit_exceeded', code: 'rate_limit_exceeded', param: null },
    });
    server.setScript({ version: 1, turns: [turns.error(500, 'boom')] });
    const failed = await responses(server, { stream: true, input: userInput });
    expect(failed.status).toBe(500);
    expect(((await failed.json()) as any).error).toMatchObject({ message: 'boom', type: 'server_error' });
    expect(server.requests.map((r) => [r.status, r.response_kind])).toEqual([
      [429, 'error'],
      [500, 'error'],
    ]);
  });
});

describe('Responses history rules', () => {
  const call = { type: 'function_call', call_id: 'c1', name: 'exec_command', arguments: '{}' };
  const output = { type: 'function_call_output', call_id: 'c1', output: 'ok' };
  const assistant = { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'x' }] };
  const reasoning = { type: 'reasoning', summary: [] };
  const developer = { type: 'message', role: 'developer', content: [{ type: 'input_text', text: 'rules' }] };

  it('counts function_call and assistant messages, not reasoning, tool outputs or other roles', () => {
    const count = (input: unknown) => openAiResponsesWire.countModelTurns({ input });
    expect(count(undefined)).toBe(0);
    expect(count('just a string')).toBe(0);
    expect(count([developer, ...userInput])).toBe(0);
    expect(count([...userInput, reasoning, call, output])).toBe(1);
    expect(count([...userInput, call, output, reasoning, assistant, ...userInput])).toBe(2);
    expect(count([{ role: 'assistant', content: 'easy input message' }])).toBe(1);
  });

  it('finds the last user text', () => {
    expect(openAiResponsesWire.lastUserText({ input: 'plain prompt' })).toBe('plain prompt');
    expect(openAiResponsesWire.lastUserText({ input: [developer] })).toBeNull();
    const input = [
      { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'first' }] },
      call,
      output,
      {
        type: 'message',
        role: 'user',
        content: [
          { type: 'input_text', text: 'second' },
          { type: 'input_text', text: 'part two' },
        ],
      },
      assistant,
    ];
    expect(openAiResponsesWire.lastUserText({ input })).toBe('second\npart two');
    expect(openAiResponsesWire.lastUserText({ input: [{ role: 'user', content: 'easy' }] })).toBe('easy');
  });

  it('a request carrying a function_call + its output gets turn 1', async () => {
    const server = await serve({ version: 1, turns: [turns.shell('true'), turns.final('all done')] });
    const events = sseEvents(
      await (await responses(server, { stream: true, input: [...userInput, reasoning, call, output] })).text(),
    );
    expect(doneItems(events)[0].content[0].text).toBe(`all done\n${DONE_MARKER}`);
    expect(server.requests[0]).toMatchObject({ turn_index: 1, response_kind: 'final' });
  });
});
