/**
 * The scripted model server itself, driven with fetch and node:http (no engine): binding, stateless turn
 * selection, exhaustion, the default script, recording and redaction, 404/400/probes, the egress guard,
 * close(), and the standalone `serveModel`.
 */
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import zlib from 'node:zlib';
import { afterEach, describe, expect, it } from 'vitest';
import { isAgentHarnessError } from '../../src/errors/index.js';
import {
  DEFAULT_REPLY,
  serveModel,
  turns,
  type ModelScript,
  type ModelServer,
  type ServedModel,
} from '../../src/model/index.js';
import { startModelServer } from '../../src/engines/model-server.js';
import { WIRE_APIS } from '../../src/model/server.js';

const servers: ModelServer[] = [];
const served: ServedModel[] = [];
const dirs: string[] = [];
afterEach(async () => {
  await Promise.all([...servers.splice(0).map((s) => s.close()), ...served.splice(0).map((s) => s.close())]);
  for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
});

async function serve(options: { script?: ModelScript | null; logFile?: string } = {}): Promise<ModelServer> {
  const server = await startModelServer(options);
  servers.push(server);
  return server;
}

function tempDir(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ah-model-server-'));
  dirs.push(dir);
  return dir;
}

async function responses(server: ModelServer, body: unknown, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(`${server.url}/v1/responses`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
}

/** Text of the assistant message in an SSE body. */
async function replyText(response: Response): Promise<string> {
  const text = await response.text();
  const done = text
    .split('\n\n')
    .filter(Boolean)
    .map((block) => JSON.parse(block.split('\n')[1]!.slice('data: '.length)))
    .find((e) => e.type === 'response.output_item.done' && e.item.type === 'message');
  return done.item.content[0].text;
}

/** A raw HTTP request through node:http (proxy-style targets, CONNECT). */
function rawRequest(server: ModelServer, method: string, target: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const request = http.request({ host: '127.0.0.1', port: server.port, method, path: target, agent: false });
    request.on('connect', (response, socket) => {
      socket.destroy();
      resolve({ status: response.statusCode ?? 0, body: '' });
    });
    request.on('response', (response) => {
      let body = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => {
        body += chunk;
      });
      response.on('end', () => resolve({ status: response.statusCode ?? 0, body }));
    });
    request.on('error', reject);
    request.end();
  });
}

const userInput = [{ type: 'message', role: 'user', content: [{ type: 'input_text', text: 'hi' }] }];
const assistant = { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'earlier' }] };

describe('scripted model server', () => {
  it('binds 127.0.0.1 on an ephemeral port; the url has no trailing slash', async () => {
    const server = await serve();
    expect(server.url).toBe(`http://127.0.0.1:${server.port}`);
    expect(server.port).toBeGreaterThan(0);
  });

  it('fails with MODEL_SERVER_FAILED when the port is taken', async () => {
    const first = await serve();
    const error = await startModelServer({ port: first.port }).then(
      (s) => s.close().then(() => null),
      (e: unknown) => e,
    );
    expect(isAgentHarnessError(error, 'MODEL_SERVER_FAILED')).toBe(true);
    expect((error as Error).message).toContain(String(first.port));
  });

  it('derives the turn from the history, so a fresh server continues a resumed session', async () => {
    const script: ModelScript = {
      version: 1,
      turns: [turns.text('one'), turns.text('two'), turns.final('three', { done: false })],
    };
    const server = await serve({ script });
    const resumed = [...userInput, assistant, ...userInput, assistant, ...userInput];
    expect(await replyText(await responses(server, { stream: true, input: resumed }))).toBe('three');
    expect(await replyText(await responses(server, { stream: true, input: userInput }))).toBe('one');
    // The same request again gets the same turn: nothing is remembered between requests.
    expect(await replyText(await responses(server, { stream: true, input: userInput }))).toBe('one');
    expect(server.requests.map((r) => r.turn_index)).toEqual([2, 0, 0]);
    const restarted = await serve({ script });
    expect(await replyText(await responses(restarted, { stream: true, input: resumed }))).toBe('three');
  });

  it('answers 400 "script exhausted" past the last turn and records it', async () => {
    const server = await serve({ script: { version: 1, turns: [turns.text('only one')] } });
    const response = await responses(server, { stream: true, input: [...userInput, assistant, ...userInput] });
    expect(response.status).toBe(400);
    const body = (await response.json()) as any;
    expect(body.error.message).toMatch(
      /^script exhausted: request needs turn 2 but the script has 1 turns\. Turns are numbered across the whole session/,
    );
    expect(body.error.type).toBe('script_exhausted');
    expect(server.requests.at(-1)).toMatchObject({
      status: 400,
      response_kind: 'exhausted',
      turn_index: 1,
      wire: 'openai-responses',
    });
  });

  it('without a script answers every request with the default reply', async () => {
    const server = await serve();
    expect(await replyText(await responses(server, { stream: true, input: userInput }))).toBe(DEFAULT_REPLY);
    const long = Array.from({ length: 20 }, () => [assistant, ...userInput]).flat();
    expect(await replyText(await responses(server, { stream: true, input: [...userInput, ...long] }))).toBe(
      DEFAULT_REPLY,
    );
    expect(server.requests.map((r) => r.turn_index)).toEqual([0, 20]);
  });

  it('setScript replaces the script for the next requests', async () => {
    const server = await serve();
    server.setScript({ version: 1, turns: [turns.text('swapped')] });
    expect(await replyText(await responses(server, { stream: true, input: userInput }))).toBe('swapped');
    server.setScript(null);
    expect(await replyText(await responses(server, { stream: true, input: userInput }))).toBe(DEFAULT_REPLY);
  });

  it('404s unknown paths naming the path and the served ones; recorded', async () => {
    const server = await serve();
    const missing = await fetch(`${server.url}/v1/embeddings`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{}',
    });
    expect(missing.status).toBe(404);
    const message = ((await missing.json()) as any).error.message as string;
    expect(message).toContain('/v1/embeddings');
    expect(message).toContain('POST /v1/responses');
    expect(server.requests).toHaveLength(1);
    expect(server.requests[0]).toMatchObject({
      method: 'POST',
      path: '/v1/embeddings',
      status: 404,
      response_kind: 'not_found',
      wire: null,
      body: {},
    });
  });

  it('400s malformed JSON and non-object bodies; recorded', async () => {
    const server = await serve();
    const malformed = await fetch(`${server.url}/v1/responses`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"input": [tor',
    });
    expect(malformed.status).toBe(400);
    expect(((await malformed.json()) as any).error.message).toContain('not valid JSON');
    const array = await responses(server, [1, 2]);
    expect(array.status).toBe(400);
    await array.text();
    expect(server.requests.map((r) => [r.status, r.response_kind])).toEqual([
      [400, 'bad_request'],
      [400, 'bad_request'],
    ]);
  });

  it('parses JSON bodies sent without a JSON content-type, and gzip-encoded bodies', async () => {
    const server = await serve({ script: { version: 1, turns: [turns.text('a'), turns.text('b')] } });
    const plain = await fetch(`${server.url}/v1/responses`, {
      method: 'POST',
      headers: { 'content-type': 'text/plain' },
      body: JSON.stringify({ stream: true, input: userInput }),
    });
    expect(await replyText(plain)).toBe('a');
    const gz = zlib.gzipSync(JSON.stringify({ stream: true, input: [...userInput, assistant] }));
    const zipped = await fetch(`${server.url}/v1/responses`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' },
      body: gz,
    });
    expect(await replyText(zipped)).toBe('b');
    expect((server.requests[1]!.body as any).input).toHaveLength(2);
  });

  it('answers warm-up probes (HEAD / and GET /) with 200 and lists requests at GET /__harness/requests', async () => {
    const server = await serve();
    expect((await fetch(server.url, { method: 'HEAD' })).status).toBe(200);
    const get = await fetch(`${server.url}/`);
    expect(get.status).toBe(200);
    await get.text();
    await (await responses(server, { stream: true, input: userInput })).text();
    const listed = (await (await fetch(`${server.url}/__harness/requests`)).json()) as any[];
    expect(listed.map((r) => [r.seq, r.method, r.path, r.response_kind])).toEqual([
      [1, 'HEAD', '/', 'probe'],
      [2, 'GET', '/', 'probe'],
      [3, 'POST', '/v1/responses', 'text'],
    ]);
    expect(server.requests).toHaveLength(3);
  });

  it('records headers with credentials redacted, in memory and in the JSONL log file', async () => {
    const logFile = path.join(tempDir(), 'nested', 'requests.jsonl');
    const server = await serve({ logFile });
    await (
      await responses(
        server,
        { stream: true, input: userInput },
        {
          authorization: 'Bearer sk-secret',
          'x-api-key': 'sk-ant-secret',
          cookie: 'session=cookie-secret',
          'x-custom': 'kept',
        },
      )
    ).text();
    await (await fetch(`${server.url}/nope`)).text();
    const [row] = server.requests;
    expect(row!.headers).toMatchObject({
      authorization: '[redacted]',
      'x-api-key': '[redacted]',
      cookie: '[redacted]',
      'x-custom': 'kept',
    });
    expect(row).toMatchObject({
      seq: 1,
      method: 'POST',
      path: '/v1/responses',
      wire: 'openai-responses',
      turn_index: 0,
      status: 200,
      response_kind: 'text',
    });
    expect(Number.isNaN(Date.parse(row!.ts))).toBe(false);
    const logged = fs.readFileSync(logFile, 'utf8');
    for (const secret of ['sk-secret', 'sk-ant-secret', 'cookie-secret']) expect(logged).not.toContain(secret);
    const lines = logged
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    expect(lines).toEqual(JSON.parse(JSON.stringify(server.requests)));
    expect(lines[0].body.input[0].role).toBe('user');
  });

  it('refuses CONNECT with 403 and records it in egress (egress guard)', async () => {
    const server = await serve();
    expect((await rawRequest(server, 'CONNECT', 'api.openai.com:443')).status).toBe(403);
    expect(server.egress).toEqual([{ ts: expect.any(String), method: 'CONNECT', target: 'api.openai.com:443' }]);
    expect(server.requests.at(-1)).toMatchObject({
      method: 'CONNECT',
      path: 'api.openai.com:443',
      status: 403,
      response_kind: 'egress_refused',
    });
  });

  it('refuses absolute-URL proxy requests to other hosts, serves those aimed at itself', async () => {
    const server = await serve();
    const refused = await rawRequest(server, 'GET', 'http://example.com/telemetry');
    expect(refused.status).toBe(403);
    expect(refused.body).toContain('http://example.com/telemetry');
    expect(server.egress.map((e) => [e.method, e.target])).toEqual([['GET', 'http://example.com/telemetry']]);
    expect((await rawRequest(server, 'GET', `${server.url}/`)).status).toBe(200);
    expect(server.egress).toHaveLength(1);
    expect(server.requests.map((r) => r.response_kind)).toEqual(['egress_refused', 'probe']);
  });

  it('close() ends keep-alive connections and resolves when called twice', async () => {
    const server = await startModelServer();
    const agent = new http.Agent({ keepAlive: true });
    try {
      await new Promise<void>((resolve, reject) => {
        http
          .get({ host: '127.0.0.1', port: server.port, path: '/', agent }, (response) => {
            response.resume();
            response.on('end', () => resolve());
          })
          .on('error', reject);
      });
      await Promise.all([server.close(), server.close()]);
      await server.close();
      await expect(fetch(server.url)).rejects.toThrow();
    } finally {
      agent.destroy();
    }
  });
});

describe('serveModel (standalone server)', () => {
  it('prints one listening line, serves the script file, and stops on close()', async () => {
    const dir = tempDir();
    const scriptPath = path.join(dir, 'script.json');
    fs.writeFileSync(scriptPath, JSON.stringify({ version: 1, turns: [{ type: 'text', text: 'from file' }] }));
    const out = new PassThrough();
    let printed = '';
    out.on('data', (chunk: Buffer) => {
      printed += chunk.toString('utf8');
    });
    const handle = await serveModel({ tools: [], scriptPath, logFile: path.join(dir, 'log.jsonl'), out });
    served.push(handle);
    expect(printed).toBe(
      `model server listening on ${handle.server.url} (wire APIs: ${WIRE_APIS.map((w) => w.id).join(', ')})\n`,
    );
    expect(printed).toContain('openai-responses');
    expect(await replyText(await responses(handle.server, { stream: true, input: userInput }))).toBe('from file');
    expect(fs.readFileSync(path.join(dir, 'log.jsonl'), 'utf8').trim().split('\n')).toHaveLength(1);
    await handle.close();
    await handle.closed;
    await expect(fetch(handle.server.url)).rejects.toThrow();
  });

  it('rejects a bad script file with MODEL_SCRIPT_INVALID before listening', async () => {
    const scriptPath = path.join(tempDir(), 'bad.json');
    fs.writeFileSync(scriptPath, JSON.stringify({ version: 1, turns: [{ type: 'shell' }] }));
    const out = new PassThrough();
    const error = await serveModel({ tools: [], scriptPath, out }).then(
      (h) => h.close().then(() => null),
      (e: unknown) => e,
    );
    expect(isAgentHarnessError(error, 'MODEL_SCRIPT_INVALID')).toBe(true);
    expect((error as Error).message).toContain(scriptPath);
    expect(out.read()).toBeNull();
  });
});
