/**
 * The scripted model server read by the vendors' official clients: `openai` (Chat Completions and Responses, each
 * plain, streamed with `stream: true`, and through the SDK's stream helper), `@anthropic-ai/sdk` (Messages plain,
 * streamed, and `messages.stream()`) and `@google/genai` (`generateContent` and `generateContentStream`). Each mode
 * reads a scripted text turn and a scripted tool call through the SDK's own parser, so a wire that drifts from the
 * vendor's shape (a missing field, an event out of order, SSE where JSON is expected) fails here.
 */
import Anthropic from '@anthropic-ai/sdk';
import { GoogleGenAI } from '@google/genai';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { turns, type ModelServer } from '../../src/model/index.js';
import { startModelServer } from '../../src/engines/model-server.js';

const TEXT = 'Hello from the scripted model.';
const REASONING = 'Thinking it over.';
const COMMAND = 'echo official';

let server: ModelServer;
beforeAll(async () => {
  // No engine tool tables: a shell turn is a generic `shell {command}` call, the tool every request below offers.
  server = await startModelServer({ tools: [] });
});
afterAll(async () => {
  await server?.close();
});

/** Scripts the next request's answer: a text reply (with reasoning) or the shell call. */
function next(kind: 'text' | 'tool'): void {
  server.setScript({
    version: 1,
    turns: [kind === 'text' ? turns.text(TEXT, { reasoning: REASONING }) : turns.shell(COMMAND)],
  });
}

const openai = (): OpenAI => new OpenAI({ apiKey: 'sk-scripted', baseURL: `${server.url}/v1`, maxRetries: 0 });
const anthropic = (): Anthropic => new Anthropic({ apiKey: 'sk-ant-scripted', baseURL: server.url, maxRetries: 0 });
const genai = (): GoogleGenAI => new GoogleGenAI({ apiKey: 'scripted', httpOptions: { baseUrl: server.url } });

const chatTools: OpenAI.ChatCompletionTool[] = [
  {
    type: 'function',
    function: {
      name: 'shell',
      description: 'Runs a command',
      parameters: { type: 'object', properties: { command: { type: 'string' } } },
    },
  },
];
const responsesTools: OpenAI.Responses.Tool[] = [
  {
    type: 'function',
    name: 'shell',
    description: 'Runs a command',
    parameters: { type: 'object', properties: { command: { type: 'string' } } },
    strict: false,
  },
];
const anthropicTools: Anthropic.Tool[] = [
  {
    name: 'shell',
    description: 'Runs a command',
    input_schema: { type: 'object', properties: { command: { type: 'string' } } },
  },
];
const geminiTools = [
  {
    functionDeclarations: [
      {
        name: 'shell',
        description: 'Runs a command',
        parametersJsonSchema: { type: 'object', properties: { command: { type: 'string' } } },
      },
    ],
  },
];
const question = 'Say hello.';

describe('openai: chat.completions', () => {
  it('create (plain JSON) reads the text and a tool call', async () => {
    next('text');
    const text = await openai().chat.completions.create({
      model: 'gpt-scripted',
      messages: [{ role: 'user', content: question }],
    });
    expect(text.choices[0]?.message.content).toBe(TEXT);
    expect(text.choices[0]?.finish_reason).toBe('stop');
    next('tool');
    const tool = await openai().chat.completions.create({
      model: 'gpt-scripted',
      messages: [{ role: 'user', content: question }],
      tools: chatTools,
    });
    const call = tool.choices[0]?.message.tool_calls?.[0];
    expect(tool.choices[0]?.finish_reason).toBe('tool_calls');
    expect(call?.type === 'function' ? call.function.name : null).toBe('shell');
    expect(call?.type === 'function' ? JSON.parse(call.function.arguments) : null).toEqual({ command: COMMAND });
  });

  it('create with stream: true reads the text deltas, and stream() assembles a tool call', async () => {
    next('text');
    const stream = await openai().chat.completions.create({
      model: 'gpt-scripted',
      messages: [{ role: 'user', content: question }],
      stream: true,
      stream_options: { include_usage: true },
    });
    let text = '';
    let finish: string | null = null;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta.content ?? '';
      finish = chunk.choices[0]?.finish_reason ?? finish;
    }
    expect(text).toBe(TEXT);
    expect(finish).toBe('stop');
    next('tool');
    const runner = openai().chat.completions.stream({
      model: 'gpt-scripted',
      messages: [{ role: 'user', content: question }],
      tools: chatTools,
    });
    const final = await runner.finalChatCompletion();
    const call = final.choices[0]?.message.tool_calls?.[0];
    expect(call?.type === 'function' ? call.function.name : null).toBe('shell');
    expect(call?.type === 'function' ? JSON.parse(call.function.arguments) : null).toEqual({ command: COMMAND });
  });
});

describe('openai: responses', () => {
  it('create (plain JSON) reads the output text, usage and a function call', async () => {
    next('text');
    const text = await openai().responses.create({ model: 'gpt-scripted', input: question });
    expect(text.status).toBe('completed');
    expect(text.output_text).toBe(TEXT);
    expect(text.usage?.total_tokens).toBeGreaterThan(0);
    next('tool');
    const tool = await openai().responses.create({ model: 'gpt-scripted', input: question, tools: responsesTools });
    const call = tool.output.find((item) => item.type === 'function_call');
    expect(call?.name).toBe('shell');
    expect(JSON.parse(call?.arguments ?? 'null')).toEqual({ command: COMMAND });
    expect(call?.call_id).toMatch(/^call_/);
  });

  it('create with stream: true reads the event sequence and the completed response', async () => {
    next('text');
    const stream = await openai().responses.create({ model: 'gpt-scripted', input: question, stream: true });
    const types: string[] = [];
    let deltas = '';
    let completed: OpenAI.Responses.Response | null = null;
    for await (const event of stream) {
      types.push(event.type);
      if (event.type === 'response.output_text.delta') deltas += event.delta;
      if (event.type === 'response.completed') completed = event.response;
    }
    expect(deltas).toBe(TEXT);
    expect(types[0]).toBe('response.created');
    expect(types.at(-1)).toBe('response.completed');
    for (const type of [
      'response.output_item.added',
      'response.content_part.added',
      'response.output_text.done',
      'response.content_part.done',
      'response.output_item.done',
    ])
      expect(types).toContain(type);
    const message = completed?.output.find((item) => item.type === 'message');
    expect(message?.type === 'message' ? message.content[0] : null).toMatchObject({ type: 'output_text', text: TEXT });
    next('tool');
    const toolStream = await openai().responses.create({
      model: 'gpt-scripted',
      input: question,
      tools: responsesTools,
      stream: true,
    });
    let args = '';
    let done: OpenAI.Responses.ResponseFunctionToolCall | null = null;
    for await (const event of toolStream) {
      if (event.type === 'response.function_call_arguments.delta') args += event.delta;
      if (event.type === 'response.output_item.done' && event.item.type === 'function_call') done = event.item;
    }
    expect(JSON.parse(args)).toEqual({ command: COMMAND });
    expect(done?.name).toBe('shell');
  });

  it('stream() accumulates the text, the reasoning summary and a function call', async () => {
    next('text');
    const stream = openai().responses.stream({ model: 'gpt-scripted', input: question });
    let deltas = '';
    stream.on('response.output_text.delta', (event) => {
      deltas += event.delta;
    });
    const final = await stream.finalResponse();
    expect(deltas).toBe(TEXT);
    expect(final.output_text).toBe(TEXT);
    const reasoning = final.output.find((item) => item.type === 'reasoning');
    expect(reasoning?.type === 'reasoning' ? reasoning.summary[0]?.text : null).toBe(REASONING);
    next('tool');
    const toolStream = openai().responses.stream({ model: 'gpt-scripted', input: question, tools: responsesTools });
    const toolFinal = await toolStream.finalResponse();
    const call = toolFinal.output.find((item) => item.type === 'function_call');
    expect(call?.name).toBe('shell');
    expect(JSON.parse(call?.arguments ?? 'null')).toEqual({ command: COMMAND });
  });
});

describe('@anthropic-ai/sdk: messages', () => {
  it('create (plain JSON) reads the text and a tool_use', async () => {
    next('text');
    const text = await anthropic().messages.create({
      model: 'claude-scripted',
      max_tokens: 256,
      messages: [{ role: 'user', content: question }],
    });
    expect(text.stop_reason).toBe('end_turn');
    expect(text.content.find((block) => block.type === 'text')).toMatchObject({ text: TEXT });
    expect(text.content.find((block) => block.type === 'thinking')).toMatchObject({ thinking: REASONING });
    next('tool');
    const tool = await anthropic().messages.create({
      model: 'claude-scripted',
      max_tokens: 256,
      messages: [{ role: 'user', content: question }],
      tools: anthropicTools,
    });
    expect(tool.stop_reason).toBe('tool_use');
    expect(tool.content.find((block) => block.type === 'tool_use')).toMatchObject({
      name: 'shell',
      input: { command: COMMAND },
    });
  });

  it('create with stream: true reads the event sequence', async () => {
    next('text');
    const stream = await anthropic().messages.create({
      model: 'claude-scripted',
      max_tokens: 256,
      messages: [{ role: 'user', content: question }],
      stream: true,
    });
    const types: string[] = [];
    let text = '';
    let stop: string | null = null;
    for await (const event of stream) {
      types.push(event.type);
      if (event.type === 'content_block_delta' && event.delta.type === 'text_delta') text += event.delta.text;
      if (event.type === 'message_delta') stop = event.delta.stop_reason;
    }
    expect(text).toBe(TEXT);
    expect(stop).toBe('end_turn');
    expect(types[0]).toBe('message_start');
    expect(types.at(-1)).toBe('message_stop');
    next('tool');
    const toolStream = await anthropic().messages.create({
      model: 'claude-scripted',
      max_tokens: 256,
      messages: [{ role: 'user', content: question }],
      tools: anthropicTools,
      stream: true,
    });
    let partial = '';
    let name: string | null = null;
    for await (const event of toolStream) {
      if (event.type === 'content_block_start' && event.content_block.type === 'tool_use')
        name = event.content_block.name;
      if (event.type === 'content_block_delta' && event.delta.type === 'input_json_delta')
        partial += event.delta.partial_json;
    }
    expect(name).toBe('shell');
    expect(JSON.parse(partial)).toEqual({ command: COMMAND });
  });

  it('messages.stream() accumulates the text, the thinking and a tool_use', async () => {
    next('text');
    const stream = anthropic().messages.stream({
      model: 'claude-scripted',
      max_tokens: 256,
      messages: [{ role: 'user', content: question }],
    });
    let deltas = '';
    stream.on('text', (delta) => {
      deltas += delta;
    });
    const final = await stream.finalMessage();
    expect(deltas).toBe(TEXT);
    expect(await stream.finalText()).toBe(TEXT);
    expect(final.stop_reason).toBe('end_turn');
    expect(final.content.find((block) => block.type === 'thinking')).toMatchObject({ thinking: REASONING });
    next('tool');
    const toolStream = anthropic().messages.stream({
      model: 'claude-scripted',
      max_tokens: 256,
      messages: [{ role: 'user', content: question }],
      tools: anthropicTools,
    });
    const toolFinal = await toolStream.finalMessage();
    expect(toolFinal.stop_reason).toBe('tool_use');
    expect(toolFinal.content.find((block) => block.type === 'tool_use')).toMatchObject({
      name: 'shell',
      input: { command: COMMAND },
    });
  });
});

describe('@google/genai: models', () => {
  it('generateContent reads the text and a function call', async () => {
    next('text');
    const text = await genai().models.generateContent({ model: 'gemini-scripted', contents: question });
    expect(text.text).toBe(TEXT);
    expect(text.candidates?.[0]?.finishReason).toBe('STOP');
    expect(text.usageMetadata?.totalTokenCount).toBeGreaterThan(0);
    next('tool');
    const tool = await genai().models.generateContent({
      model: 'gemini-scripted',
      contents: question,
      config: { tools: geminiTools },
    });
    expect(tool.functionCalls?.[0]).toMatchObject({ name: 'shell', args: { command: COMMAND } });
  });

  it('generateContentStream reads the streamed chunks and a function call', async () => {
    next('text');
    let text = '';
    let finish: string | undefined;
    for await (const chunk of await genai().models.generateContentStream({
      model: 'gemini-scripted',
      contents: question,
    })) {
      text += chunk.text ?? '';
      finish = chunk.candidates?.[0]?.finishReason ?? finish;
    }
    expect(text).toBe(TEXT);
    expect(finish).toBe('STOP');
    next('tool');
    const calls: unknown[] = [];
    for await (const chunk of await genai().models.generateContentStream({
      model: 'gemini-scripted',
      contents: question,
      config: { tools: geminiTools },
    }))
      calls.push(...(chunk.functionCalls ?? []));
    expect(calls).toEqual([expect.objectContaining({ name: 'shell', args: { command: COMMAND } })]);
  });
});
