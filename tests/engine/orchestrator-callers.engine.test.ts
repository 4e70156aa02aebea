/**
 * The HTTP LLMCallers against real loopback servers: the scripted model server for errors and answers, and a
 * tiny node:http server for what the scripted server cannot do (retry-after, a success after a 429, silence).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { parseModelScript, type ModelServer } from '../../src/model/index.js';
import { startModelServer } from '../../src/engines/model-server.js';
import { type CallerWire, vendorOkReply } from '../helpers/vendor-replies.js';
import {
  createAnthropicMessagesCaller,
  createOpenAiChatCaller,
  type HttpCallerOptions,
  type LLMCaller,
} from '../../src/orchestrator/index.js';
import { scaled } from '../helpers/load-scaled.js';

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (closers.length) await closers.pop()!();
});

async function scripted(turns: unknown[]): Promise<ModelServer> {
  const server = await startModelServer({ script: parseModelScript({ version: 1, turns }) });
  closers.push(() => server.close());
  return server;
}

/** A loopback server answering each request with the next handler; past the list it answers 500. */
async function sequenceServer(
  handlers: ((res: http.ServerResponse) => void)[],
): Promise<{ url: string; hits: number }> {
  const state = { url: '', hits: 0 };
  const server = http.createServer((req, res) => {
    req.resume();
    const handler = handlers[state.hits++];
    if (handler) handler(res);
    else res.writeHead(500).end('{}');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  state.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  closers.push(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );
  return state;
}

type Wire = CallerWire;
function caller(wire: Wire, url: string, extra: Partial<HttpCallerOptions> = {}): LLMCaller {
  return wire === 'openai'
    ? createOpenAiChatCaller({ baseURL: `${url}/v1`, apiKey: 'k', ...extra })
    : createAnthropicMessagesCaller({ baseURL: url, apiKey: 'k', ...extra });
}
const ask = {
  model: 'm',
  messages: [
    { role: 'system' as const, content: 'sys' },
    { role: 'user' as const, content: 'hi' },
  ],
};

describe.each(['openai', 'anthropic'] as Wire[])('%s caller', (wire) => {
  it("returns text, model and usage, streaming and not, and sends system the wire's way", async () => {
    const server = await scripted([{ type: 'text', text: 'hello there' }]);
    const c = caller(wire, server.url);
    for (const stream of [false, true]) {
      const response = await c.call({ ...ask, stream, maxTokens: 64 });
      expect(response).toMatchObject({ text: 'hello there', attempts: 1, toolCalls: [] });
      expect(response.usage?.outputTokens).toBeGreaterThan(0);
    }
    const body = server.requests[0]!.body as Record<string, unknown>;
    if (wire === 'anthropic')
      expect(body).toMatchObject({ system: 'sys', max_tokens: 64, messages: [{ role: 'user', content: 'hi' }] });
    else expect(body).toMatchObject({ max_tokens: 64, messages: ask.messages });
    expect((server.requests[1]!.body as { stream?: boolean }).stream).toBe(true);
  });

  it('retries a 429 a bounded number of times, then fails with LLM_HTTP_ERROR carrying status and vendor body', async () => {
    const server = await scripted([{ type: 'error', status: 429, message: 'slow down' }]);
    const waits: number[] = [];
    const c = caller(wire, server.url, {
      retry: { maxRetries: 2, baseDelayMs: 100, sleep: async (ms) => void waits.push(ms) },
    });
    const error = await c.call(ask).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'LLM_HTTP_ERROR', details: { status: 429, attempts: 3, model: 'm' } });
    expect(JSON.stringify((error as { details: { body: unknown } }).details.body)).toContain('slow down');
    expect(server.requests).toHaveLength(3);
    expect(waits).toEqual([100, 200]);
  });

  it('does not retry a 400', async () => {
    const server = await scripted([{ type: 'error', status: 400, message: 'bad model' }]);
    const error = await caller(wire, server.url, { retry: { sleep: async () => undefined } })
      .call(ask)
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'LLM_HTTP_ERROR', details: { status: 400, attempts: 1 } });
    expect(server.requests).toHaveLength(1);
  });

  it('honours retry-after on a 503 and succeeds on the next attempt', async () => {
    const ok = vendorOkReply(wire, 'after wait');
    const target = await sequenceServer([
      (res) =>
        res
          .writeHead(503, { 'content-type': 'application/json', 'retry-after': '7' })
          .end('{"error":{"message":"busy"}}'),
      (res) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(ok)),
    ]);
    const waits: number[] = [];
    const response = await caller(wire, target.url, { retry: { sleep: async (ms) => void waits.push(ms) } }).call(ask);
    expect(response).toMatchObject({ text: 'after wait', attempts: 2 });
    expect(waits).toEqual([7000]);
    expect(target.hits).toBe(2);
  });

  it('times out a silent endpoint with LLM_TIMEOUT, without retrying', async () => {
    const target = await sequenceServer([() => undefined, () => undefined]);
    const error = await caller(wire, target.url, { timeoutMs: 200 })
      .call(ask)
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'LLM_TIMEOUT', details: { attempts: 1 } });
    expect(target.hits).toBe(1);
  });

  it('aborts with LLM_ABORTED, in flight and while waiting to retry', async () => {
    const target = await sequenceServer([() => undefined]);
    const controller = new AbortController();
    const pending = caller(wire, target.url).call({ ...ask, signal: controller.signal });
    // Abort once the request has reached the server (polling the hit counter, not sleeping a fixed time).
    await expect.poll(() => target.hits, { timeout: scaled(20_000) }).toBe(1);
    controller.abort();
    await expect(pending).rejects.toMatchObject({ code: 'LLM_ABORTED' });

    const server = await scripted([{ type: 'error', status: 500, message: 'down' }]);
    const second = new AbortController();
    const waiting = caller(wire, server.url, {
      retry: {
        sleep: async (_ms, signal) => {
          second.abort();
          signal?.throwIfAborted();
        },
      },
    }).call({ ...ask, signal: second.signal });
    await expect(waiting).rejects.toMatchObject({ code: 'LLM_ABORTED', details: { attempts: 1 } });
  });

  it('reports an unreachable endpoint as LLM_CONNECTION_FAILED after its retries', async () => {
    const target = await sequenceServer([]);
    const url = target.url;
    await closers.pop()!();
    const error = await caller(wire, url, { retry: { maxRetries: 1, sleep: async () => undefined } })
      .call(ask)
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'LLM_CONNECTION_FAILED', details: { attempts: 2 } });
  });
});

it('rejects a bad retry policy with CONFIG_INVALID', () => {
  expect(() =>
    createOpenAiChatCaller({ baseURL: 'http://127.0.0.1:9/v1', apiKey: 'k', retry: { maxRetries: -1 } }),
  ).toThrow(expect.objectContaining({ code: 'CONFIG_INVALID' }));
});
