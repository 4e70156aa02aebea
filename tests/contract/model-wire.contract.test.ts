/**
 * The scripted model server speaking the OpenAI Responses API, driven with fetch (no engine).
 */
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { isAgentHarnessError } from '../../src/errors/index.js';
import { DEFAULT_REPLY, DONE_MARKER, loadModelScript, parseModelScript, startModelServer, turns, type ModelScript, type ModelServer } from '../../src/model/index.js';

const servers: ModelServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

async function serve(script: ModelScript | null = null, logFile?: string): Promise<ModelServer> {
  const server = await startModelServer({ script, ...(logFile ? { logFile } : {}) });
  servers.push(server);
  return server;
}

/** Parses an SSE body into its events. */
function sseEvents(text: string): Array<{ event: string; data: any }> {
  return text.split('\n\n').filter((block) => block.trim()).map((block) => {
    const event = /^event: (.*)$/m.exec(block)?.[1] ?? '';
    const data = JSON.parse(/^data: (.*)$/m.exec(block)?.[1] ?? 'null');
    return { event, data };
  });
}

async function responses(server: ModelServer, body: unknown, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(`${server.url}/v1/responses`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: 'Bearer sk-secret', ...headers }, body: JSON.stringify(body) });
}

const userInput = [{ type: 'message', role: 'user', content: [{ type: 'input_text', text: 'hi' }] }];

describe('scripted model: OpenAI Responses API', () => {
  it('binds 127.0.0.1 on an ephemeral port', async () => {
    const server = await serve();
    expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(server.port).toBeGreaterThan(0);
  });

  it('answers a text turn as SSE ending in response.completed with usage', async () => {
    const server = await serve({ version: 1, turns: [turns.text('hello there')] });
    const response = await responses(server, { model: 'gpt-5.5', stream: true, input: userInput });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toContain('text/event-stream');
    const events = sseEvents(await response.text());
    expect(events.map((e) => e.event)).toEqual(['response.created', 'response.output_item.added', 'response.output_text.delta', 'response.output_item.done', 'response.completed']);
    for (const e of events) expect(e.data.type).toBe(e.event);
    const done = events.find((e) => e.event === 'response.output_item.done')!.data.item;
    expect(done).toMatchObject({ type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'hello there' }] });
    expect(events.at(-1)!.data.response.usage.total_tokens).toBeGreaterThan(0);
  });

  it('renders a shell turn as an exec_command function_call (shell when only that tool is offered)', async () => {
    const server = await serve({ version: 1, turns: [turns.shell('echo hi > out.txt')] });
    let events = sseEvents(await (await responses(server, { stream: true, input: userInput, tools: [{ type: 'function', name: 'exec_command' }] })).text());
    const call = events.find((e) => e.event === 'response.output_item.done')!.data.item;
    expect(call).toMatchObject({ type: 'function_call', name: 'exec_command' });
    expect(JSON.parse(call.arguments)).toEqual({ cmd: 'echo hi > out.txt' });
    expect(call.call_id).toMatch(/^call_/);
    events = sseEvents(await (await responses(server, { stream: true, input: userInput, tools: [{ type: 'function', name: 'shell' }] })).text());
    const legacy = events.find((e) => e.event === 'response.output_item.done')!.data.item;
    expect(legacy.name).toBe('shell');
    expect(JSON.parse(legacy.arguments)).toEqual({ command: ['bash', '-lc', 'echo hi > out.txt'] });
  });

  it('derives the turn from the history, appends the done marker to final turns, and is stateless', async () => {
    const script: ModelScript = { version: 1, turns: [turns.shell('true'), turns.final('all done'), turns.final('no marker', { done: false })] };
    const server = await serve(script);
    const history = [...userInput, { type: 'function_call', call_id: 'c1', name: 'exec_command', arguments: '{}' }, { type: 'function_call_output', call_id: 'c1', output: 'ok' }];
    const events = sseEvents(await (await responses(server, { stream: true, input: history })).text());
    const text = events.find((e) => e.event === 'response.output_item.done')!.data.item.content[0].text as string;
    expect(text).toBe(`all done\n${DONE_MARKER}`);
    const third = sseEvents(await (await responses(server, { stream: true, input: [...history, { type: 'message', role: 'assistant', content: [] }, ...userInput] })).text());
    expect(third.find((e) => e.event === 'response.output_item.done')!.data.item.content[0].text).toBe('no marker');
    expect(server.requests.map((r) => r.turn_index)).toEqual([1, 2]);
    // A second server with the same script answers the same history the same way (resume after restart).
    const again = await serve(script);
    const replay = sseEvents(await (await responses(again, { stream: true, input: history })).text());
    expect(replay.find((e) => e.event === 'response.output_item.done')!.data.item.content[0].text).toBe(text);
  });

  it('answers stream:false with a plain JSON response', async () => {
    const server = await serve({ version: 1, turns: [turns.text('plain')] });
    const body = await (await responses(server, { stream: false, input: userInput })).json() as any;
    expect(body).toMatchObject({ object: 'response', status: 'completed', output: [{ type: 'message', content: [{ text: 'plain' }] }] });
  });

  it('returns 400 "script exhausted" past the last turn, recorded, never hanging', async () => {
    const server = await serve({ version: 1, turns: [turns.text('only one')] });
    const history = [...userInput, { type: 'message', role: 'assistant', content: [] }, ...userInput];
    const response = await responses(server, { stream: true, input: history });
    expect(response.status).toBe(400);
    const body = await response.json() as any;
    expect(body.error.message).toBe('script exhausted: request needs turn 2 but the script has 1 turns');
    expect(server.requests.at(-1)).toMatchObject({ status: 400, response_kind: 'exhausted', turn_index: 1 });
  });

  it('answers error turns with the status and the vendor error shape', async () => {
    const server = await serve({ version: 1, turns: [turns.error(429, 'slow down')] });
    const response = await responses(server, { stream: true, input: userInput });
    expect(response.status).toBe(429);
    expect(await response.json()).toEqual({ error: { message: 'slow down', type: 'rate_limit_exceeded', code: 'rate_limit_exceeded', param: null } });
  });

  it('uses the default reply without a script', async () => {
    const server = await serve();
    for (let i = 0; i < 3; i += 1) {
      const events = sseEvents(await (await responses(server, { stream: true, input: userInput })).text());
      expect(events.find((e) => e.event === 'response.output_item.done')!.data.item.content[0].text).toBe(DEFAULT_REPLY);
    }
  });

  it('404s unknown paths naming the served ones, 400s malformed JSON, 200s warm-up probes', async () => {
    const server = await serve();
    const missing = await fetch(`${server.url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    expect(missing.status).toBe(404);
    expect(((await missing.json()) as any).error.message).toContain('POST /v1/responses');
    const malformed = await fetch(`${server.url}/v1/responses`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"input": [tor' });
    expect(malformed.status).toBe(400);
    expect((await fetch(server.url, { method: 'HEAD' })).status).toBe(200);
    expect(server.requests.map((r) => r.response_kind)).toEqual(['not_found', 'bad_request', 'probe']);
    const listed = await (await fetch(`${server.url}/__harness/requests`)).json() as unknown[];
    expect(listed).toHaveLength(3);
  });

  it('redacts credentials in recorded headers and in the log file', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ah-model-log-'));
    try {
      const logFile = path.join(dir, 'requests.jsonl');
      const server = await serve(null, logFile);
      await (await responses(server, { stream: true, input: userInput }, { 'x-api-key': 'sk-ant-secret' })).text();
      expect(server.requests[0]!.headers.authorization).toBe('[redacted]');
      expect(server.requests[0]!.headers['x-api-key']).toBe('[redacted]');
      const logged = fs.readFileSync(logFile, 'utf8');
      expect(logged).not.toContain('sk-secret');
      expect(logged).not.toContain('sk-ant-secret');
      expect(JSON.parse(logged.split('\n')[0]!).body.input[0].role).toBe('user');
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('refuses CONNECT and absolute-URL proxy requests (egress guard) and records them', async () => {
    const server = await serve();
    const status = await new Promise<number>((resolve, reject) => {
      const request = http.request({ host: '127.0.0.1', port: server.port, method: 'CONNECT', path: 'api.openai.com:443' });
      request.on('connect', (response, socket) => {
        socket.destroy();
        resolve(response.statusCode ?? 0);
      });
      request.on('error', reject);
      request.end();
    });
    expect(status).toBe(403);
    const proxied = await new Promise<number>((resolve, reject) => {
      const request = http.request({ host: '127.0.0.1', port: server.port, method: 'GET', path: 'http://example.com/telemetry' }, (response) => {
        response.resume();
        resolve(response.statusCode ?? 0);
      });
      request.on('error', reject);
      request.end();
    });
    expect(proxied).toBe(403);
    expect(server.egress.map((e) => e.target)).toEqual(['api.openai.com:443', 'http://example.com/telemetry']);
  });

  it('close() is idempotent and ends keep-alive connections', async () => {
    const server = await startModelServer();
    const agent = new http.Agent({ keepAlive: true });
    await new Promise<void>((resolve) => http.get({ host: '127.0.0.1', port: server.port, path: '/', agent }, (r) => {
      r.resume();
      r.on('end', () => resolve());
    }));
    await Promise.all([server.close(), server.close()]);
    agent.destroy();
    await expect(fetch(server.url)).rejects.toThrow();
  });
});

describe('model scripts', () => {
  it('validates scripts and names the offending path', () => {
    expect(parseModelScript({ version: 1, turns: [{ type: 'final', text: 'x' }] }).turns[0]).toEqual({ type: 'final', text: 'x', done: true });
    let error: unknown;
    try {
      parseModelScript({ version: 1, turns: [{ type: 'shell' }] }, 'my-script.json');
    } catch (e) {
      error = e;
    }
    expect(isAgentHarnessError(error, 'MODEL_SCRIPT_INVALID')).toBe(true);
    expect((error as Error).message).toContain('my-script.json');
    expect((error as Error).message).toContain('turns.0');
  });

  it('loadModelScript reports missing files and bad JSON with MODEL_SCRIPT_INVALID and the path', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ah-script-'));
    try {
      const bad = path.join(dir, 'bad.json');
      fs.writeFileSync(bad, '{"version": 1, "turns": [');
      for (const file of [bad, path.join(dir, 'missing.json')]) {
        const error = await loadModelScript(file).then(() => null, (e: unknown) => e);
        expect(isAgentHarnessError(error, 'MODEL_SCRIPT_INVALID')).toBe(true);
        expect((error as Error).message).toContain(file);
      }
      const good = path.join(dir, 'good.json');
      fs.writeFileSync(good, JSON.stringify({ version: 1, turns: [{ type: 'text', text: 'hi' }] }));
      expect((await loadModelScript(good)).turns).toHaveLength(1);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
