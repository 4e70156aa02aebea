/**
 * The Gemini wire API of the scripted model server, driven with fetch (no engine): SSE and plain
 * GenerateContentResponse bodies as gemini-cli 0.61.0 reads them, the shell call it runs, countTokens, Google's
 * error shape, the history rule, and the structured-output side requests (model router, next speaker).
 */
import { describe, expect, it } from 'vitest';
import {
  DONE_MARKER,
  geminiSideAnswer,
  geminiWire,
  isGeminiSideRequest,
  turns,
  type ModelServer,
} from '../../src/model/index.js';
import { useScriptedServers } from '../helpers/model-server.js';

const serve = useScriptedServers();

const MODEL_PATH = '/v1beta/models/gemini-2.5-pro';
const user = (text: string) => ({ role: 'user', parts: [{ text }] });
const tools = [
  { functionDeclarations: [{ name: 'read_file' }, { name: 'run_shell_command' }, { name: 'activate_skill' }] },
];

async function post(server: ModelServer, route: string, body: unknown): Promise<Response> {
  return fetch(`${server.url}${route}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
}

/** Parses an SSE body into the JSON of its `data:` blocks. */
function sseData(text: string): any[] {
  expect(text.endsWith('\n\n')).toBe(true);
  return text
    .split('\n\n')
    .filter(Boolean)
    .map((block) => {
      expect(block).toMatch(/^data: /);
      return JSON.parse(block.slice('data: '.length));
    });
}

/** The router side request as gemini-cli 0.61.0 sends it (model `auto`), trimmed to what matters. */
const routerRequest = {
  contents: [user('write hello.txt')],
  systemInstruction: { role: 'user', parts: [{ text: 'You are a specialized Task Routing AI. …' }] },
  generationConfig: {
    temperature: 1,
    responseMimeType: 'application/json',
    responseJsonSchema: {
      type: 'OBJECT',
      properties: {
        complexity_reasoning: { type: 'STRING' },
        complexity_score: { type: 'INTEGER', description: 'Complexity score from 1-100.' },
      },
      required: ['complexity_reasoning', 'complexity_score'],
    },
  },
};

describe('Gemini wire API', () => {
  it('answers streamGenerateContent?alt=sse with one data block: model content, STOP, usageMetadata', async () => {
    const server = await serve({ version: 1, turns: [turns.text('hello there')] });
    const response = await post(server, `${MODEL_PATH}:streamGenerateContent?alt=sse`, {
      contents: [user('hi')],
      tools,
    });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toContain('text/event-stream');
    const [chunk, ...rest] = sseData(await response.text());
    expect(rest).toEqual([]);
    expect(chunk.candidates).toEqual([
      { content: { role: 'model', parts: [{ text: 'hello there' }] }, finishReason: 'STOP', index: 0 },
    ]);
    expect(chunk.usageMetadata).toEqual({ promptTokenCount: 10, candidatesTokenCount: 5, totalTokenCount: 15 });
    expect(server.requests[0]).toMatchObject({ wire: 'gemini', turn_index: 0, response_kind: 'text' });
  });

  it('renders a shell turn as a functionCall to the declared run_shell_command with {command}', async () => {
    const server = await serve({ version: 1, turns: [turns.shell('echo hi > out.txt')] });
    const [chunk] = sseData(
      await (
        await post(server, `${MODEL_PATH}:streamGenerateContent?alt=sse`, { contents: [user('go')], tools })
      ).text(),
    );
    expect(chunk.candidates[0].content.parts).toEqual([
      { functionCall: { name: 'run_shell_command', args: { command: 'echo hi > out.txt' } } },
    ]);
  });

  it('final turns carry the done marker; reasoning is a thought part first', async () => {
    const server = await serve({ version: 1, turns: [turns.final('Done.', { reasoning: 'thinking' })] });
    const [chunk] = sseData(
      await (await post(server, `${MODEL_PATH}:streamGenerateContent?alt=sse`, { contents: [user('go')] })).text(),
    );
    expect(chunk.candidates[0].content.parts).toEqual([
      { text: 'thinking', thought: true },
      { text: `Done.\n${DONE_MARKER}` },
    ]);
  });

  it('answers generateContent with plain JSON, on /v1beta and /v1', async () => {
    const server = await serve({ version: 1, turns: [turns.text('plain')] });
    for (const prefix of ['/v1beta', '/v1']) {
      const response = await post(server, `${prefix}/models/gemini-2.5-pro:generateContent`, {
        contents: [user('hi')],
      });
      expect(response.headers.get('content-type')).toContain('application/json');
      expect(((await response.json()) as any).candidates[0].content.parts).toEqual([{ text: 'plain' }]);
    }
  });

  it('answers countTokens with {totalTokens: 10}', async () => {
    const server = await serve({ version: 1, turns: [turns.text('x')] });
    expect(await (await post(server, `${MODEL_PATH}:countTokens`, { contents: [user('hi')] })).json()).toEqual({
      totalTokens: 10,
    });
  });

  it('picks the turn from the number of model entries in contents', async () => {
    const server = await serve({ version: 1, turns: [turns.shell('ls'), turns.text('second')] });
    const history = [
      user('go'),
      {
        role: 'model',
        parts: [{ functionCall: { name: 'run_shell_command', args: { command: 'ls' } }, thoughtSignature: 'x' }],
      },
      { role: 'user', parts: [{ functionResponse: { name: 'run_shell_command', response: { output: '' } } }] },
    ];
    expect(geminiWire.countModelTurns({ contents: history })).toBe(1);
    const [chunk] = sseData(
      await (await post(server, `${MODEL_PATH}:streamGenerateContent?alt=sse`, { contents: history })).text(),
    );
    expect(chunk.candidates[0].content.parts).toEqual([{ text: 'second' }]);
    expect(geminiWire.lastUserText({ contents: history })).toBe('go');
  });

  it('answers error turns in Google error shape with the matching status', async () => {
    const server = await serve({
      version: 1,
      turns: [turns.error(429, 'Resource has been exhausted (e.g. check quota).')],
    });
    const response = await post(server, `${MODEL_PATH}:streamGenerateContent?alt=sse`, { contents: [user('hi')] });
    expect(response.status).toBe(429);
    expect(await response.json()).toEqual({
      error: { code: 429, message: 'Resource has been exhausted (e.g. check quota).', status: 'RESOURCE_EXHAUSTED' },
    });
  });

  it('answers a past-the-end request with a 400 INVALID_ARGUMENT', async () => {
    const server = await serve({ version: 1, turns: [] });
    const response = await post(server, `${MODEL_PATH}:streamGenerateContent?alt=sse`, { contents: [user('hi')] });
    expect(response.status).toBe(400);
    expect(((await response.json()) as any).error).toMatchObject({ code: 400, status: 'INVALID_ARGUMENT' });
  });

  it('answers the model-router side request from its schema without using a script turn', async () => {
    const server = await serve({ version: 1, turns: [turns.shell('ls'), turns.final('done')] });
    expect(isGeminiSideRequest(routerRequest)).toBe(true);
    const history = {
      contents: [user('go'), { role: 'model', parts: [{ text: 'x' }] }, user('more')],
      generationConfig: routerRequest.generationConfig,
    };
    expect(
      geminiWire.sideRequestKind!({
        method: 'POST',
        path: '/v1beta/models/m:generateContent',
        query: new URLSearchParams(),
        headers: {},
        body: history,
      }),
    ).toBe('structured_output');
    const body = (await (
      await post(server, '/v1beta/models/gemini-3.5-flash-lite:generateContent', routerRequest)
    ).json()) as any;
    const answer = JSON.parse(body.candidates[0].content.parts[0].text);
    expect(answer).toEqual({ complexity_reasoning: 'x', complexity_score: 1 });
    // The next agent request still gets turn 0.
    const [chunk] = sseData(
      await (
        await post(server, `${MODEL_PATH}:streamGenerateContent?alt=sse`, { contents: [user('go')], tools })
      ).text(),
    );
    expect(chunk.candidates[0].content.parts[0].functionCall).toMatchObject({ name: 'run_shell_command' });
    expect(server.requests.map((r) => [r.response_kind, r.turn_index])).toEqual([
      ['side', null],
      ['shell', 0],
    ]);
  });

  it('tells a next-speaker check that the user speaks next', () => {
    const nextSpeaker = {
      contents: [user('check')],
      generationConfig: {
        responseMimeType: 'application/json',
        responseJsonSchema: {
          type: 'object',
          properties: { reasoning: { type: 'string' }, next_speaker: { type: 'string', enum: ['user', 'model'] } },
        },
      },
    };
    expect(geminiSideAnswer(nextSpeaker)).toEqual({ reasoning: expect.any(String), next_speaker: 'user' });
    expect(geminiSideAnswer({ generationConfig: { responseMimeType: 'application/json' } })).toEqual({});
    expect(isGeminiSideRequest({ contents: [user('hi')], generationConfig: { temperature: 1 } })).toBe(false);
  });

  it('does not claim other routes', async () => {
    const server = await serve({ version: 1, turns: [turns.text('x')] });
    const response = await post(server, `${MODEL_PATH}:embedContent`, { contents: [user('hi')] });
    expect(response.status).toBe(404);
    expect(((await response.json()) as any).error.message).toContain(':streamGenerateContent');
  });
});
