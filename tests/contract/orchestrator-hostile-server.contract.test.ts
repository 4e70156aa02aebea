/**
 * The HTTP callers against a hostile server on 127.0.0.1 (node:http): headers then a stalled body, a stream that
 * stalls mid-SSE, a body that trickles forever, a huge body (streamed from one reused buffer, never allocated), and
 * 429s with retry-after. Each call must end with its stable code; the huge body must not cost memory in its size.
 * No assertion on wall-clock time: a call "ended" when its promise settled before the test's own timeout.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  createAnthropicMessagesCaller,
  createOpenAiChatCaller,
  type HttpCallerOptions,
  type LLMCaller,
} from '../../src/orchestrator/index.js';
import { DEFAULT_MAX_RESPONSE_BYTES } from '../../src/orchestrator/caller-limits.js';
import { loadAnthropicSdk, loadOpenAiSdk } from '../../src/orchestrator/vendor-sdk.js';
import { type CallerWire, vendorOkReply } from '../helpers/vendor-replies.js';
import { scaled } from '../helpers/load-scaled.js';

type Handler = (req: http.IncomingMessage, res: http.ServerResponse) => void;
interface Hostile {
  url: string;
  hits: number;
  /** Body bytes the server managed to hand to the socket, over all requests. */
  written: number;
}

// The SDKs are loaded before any memory is measured: their code is not the body's cost.
beforeAll(async () => {
  await Promise.all([loadOpenAiSdk(), loadAnthropicSdk()]);
});

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (closers.length) await closers.pop()!();
});

/** A loopback server answering request N with handlers[N] (the last one repeats). */
async function hostileServer(handlers: Handler[]): Promise<Hostile> {
  const state: Hostile = { url: '', hits: 0, written: 0 };
  const server = http.createServer((req, res) => {
    req.resume();
    const handler = handlers[Math.min(state.hits, handlers.length - 1)]!;
    state.hits += 1;
    handler(req, res);
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

/** Writes `total` bytes of `filler` after `head`, honouring backpressure, until done or the client goes away. */
function streamHuge(state: Hostile, res: http.ServerResponse, head: string, total: number, filler: Buffer): void {
  let sent = 0;
  const pump = (): void => {
    while (sent < total && !res.destroyed) {
      sent += filler.length;
      state.written += filler.length;
      if (!res.write(filler)) return void res.once('drain', pump);
    }
    if (!res.destroyed) res.end();
  };
  res.write(head);
  pump();
}

type Wire = CallerWire;
function caller(wire: Wire, url: string, extra: Partial<HttpCallerOptions> = {}): LLMCaller {
  return wire === 'openai'
    ? createOpenAiChatCaller({ baseURL: `${url}/v1`, apiKey: 'k', ...extra })
    : createAnthropicMessagesCaller({ baseURL: url, apiKey: 'k', ...extra });
}
const ask = { model: 'm', messages: [{ role: 'user' as const, content: 'hi' }] };

/** One SSE event of the wire, enough for the SDK to accept the stream's start. */
function firstEvent(wire: Wire): string {
  return wire === 'openai'
    ? `data: ${JSON.stringify({ id: 'c', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta: { content: 'he' } }] })}\n\n`
    : `event: message_start\ndata: ${JSON.stringify({ type: 'message_start', message: { id: 'msg', type: 'message', role: 'assistant', model: 'm', content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 1, output_tokens: 0 } } })}\n\n`;
}

function okBody(wire: Wire): string {
  return JSON.stringify(vendorOkReply(wire, 'after wait'));
}

const json = { 'content-type': 'application/json' };
const sse = { 'content-type': 'text/event-stream' };

describe.each(['openai', 'anthropic'] as Wire[])('%s caller on a hostile server', (wire) => {
  it('headers then a stalled body: LLM_TIMEOUT at the deadline, not retried', async () => {
    const target = await hostileServer([(_req, res) => res.writeHead(200, json).write('{"id":')]);
    const error = await caller(wire, target.url, { timeoutMs: 1500 })
      .call(ask)
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'LLM_TIMEOUT', details: { attempts: 1, vendor: expect.any(String) } });
    expect(target.hits).toBe(1);
  });

  it('a stream that stalls after its first event: LLM_TIMEOUT by the idle timeout', async () => {
    const target = await hostileServer([(_req, res) => res.writeHead(200, sse).write(firstEvent(wire))]);
    const error = await caller(wire, target.url, { idleTimeoutMs: 500 })
      .call({ ...ask, stream: true })
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'LLM_TIMEOUT', message: expect.stringContaining('idle') });
  });

  it('a stream aborted by its AbortSignal mid-way is LLM_ABORTED, not a success with the partial text', async () => {
    let served = false;
    const target = await hostileServer([
      (_req, res) => {
        res.writeHead(200, sse).write(firstEvent(wire));
        served = true;
      },
    ]);
    const controller = new AbortController();
    const pending = caller(wire, target.url)
      .call({ ...ask, stream: true, signal: controller.signal })
      .catch((e: unknown) => e);
    await expect.poll(() => served, { timeout: scaled(20_000) }).toBe(true);
    controller.abort();
    expect(await pending).toMatchObject({ code: 'LLM_ABORTED' });
  });

  it('a stream that trickles forever (never idle): LLM_TIMEOUT at the deadline', async () => {
    const target = await hostileServer([
      (_req, res) => {
        res.writeHead(200, sse).write(firstEvent(wire));
        const timer = setInterval(() => (res.destroyed ? clearInterval(timer) : res.write(': keep-alive\n\n')), 20);
        res.on('close', () => clearInterval(timer));
      },
    ]);
    const error = await caller(wire, target.url, { timeoutMs: 3000, idleTimeoutMs: 2000 })
      .call({ ...ask, stream: true })
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'LLM_TIMEOUT', message: expect.stringContaining('deadline') });
  });

  for (const stream of [false, true]) {
    it(`a 400 MB body (${stream ? 'SSE' : 'JSON'}): LLM_RESPONSE_TOO_LARGE, reading stopped, memory bounded`, async () => {
      const total = 400 * 1024 * 1024;
      const filler = Buffer.alloc(1024 * 1024, stream ? ': padding padding padding\n' : 'a');
      let target: Hostile;
      const hostile = await hostileServer([
        (_req, res) => {
          res.writeHead(200, stream ? sse : json);
          streamHuge(target, res, stream ? firstEvent(wire) : '{"id":"', total, filler);
        },
      ]);
      target = hostile;
      global.gc?.();
      const before = process.memoryUsage().rss;
      let peak = before;
      const sampler = setInterval(() => {
        peak = Math.max(peak, process.memoryUsage().rss);
      }, 5);
      const error = await caller(wire, hostile.url)
        .call({ ...ask, stream })
        .catch((e: unknown) => e)
        .finally(() => clearInterval(sampler));
      peak = Math.max(peak, process.memoryUsage().rss);
      expect(error).toMatchObject({
        code: 'LLM_RESPONSE_TOO_LARGE',
        details: { maxResponseBytes: DEFAULT_MAX_RESPONSE_BYTES },
      });
      expect((error as { hint: string }).hint).toContain('maxResponseBytes');
      // The client stopped reading at the cap: the server could not hand the socket the whole body.
      await expect.poll(() => hostile.written, { timeout: scaled(20_000) }).toBeGreaterThan(0);
      expect(hostile.written).toBeLessThan(total / 2);
      expect(peak - before).toBeLessThan(100 * 1024 * 1024);
    });
  }

  it('a content-length over the cap fails at once with LLM_RESPONSE_TOO_LARGE', async () => {
    const target = await hostileServer([
      (_req, res) => res.writeHead(200, { ...json, 'content-length': String(2048) }).write('{"id":'),
    ]);
    const error = await caller(wire, target.url, { maxResponseBytes: 1024 })
      .call(ask)
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'LLM_RESPONSE_TOO_LARGE', message: expect.stringContaining('2048') });
  });

  it('429 with retry-after: waits as asked (the server refuses an early retry), retries, succeeds', async () => {
    // The server plays by its own header: a retry sooner than retry-after (1 s) is refused again, without one.
    let refusedAt = 0;
    const target = await hostileServer([
      (_req, res) => {
        refusedAt = performance.now();
        res.writeHead(429, { ...json, 'retry-after': '1' }).end('{"error":{"message":"slow down"}}');
      },
      (_req, res) =>
        performance.now() - refusedAt >= 950
          ? res.writeHead(200, json).end(okBody(wire))
          : res.writeHead(429, json).end('{"error":{"message":"too early"}}'),
    ]);
    const response = await caller(wire, target.url, { retry: { maxRetries: 1 } }).call(ask);
    expect(response).toMatchObject({ text: 'after wait', attempts: 2 });
    expect(target.hits).toBe(2);
  });

  it('429s forever with a huge retry-after: the waits are capped and the retries bounded', async () => {
    const target = await hostileServer([
      (_req, res) => res.writeHead(429, { ...json, 'retry-after': '86400' }).end('{"error":{"message":"no"}}'),
    ]);
    const error = await caller(wire, target.url, { retry: { maxRetries: 2, maxDelayMs: 200 } })
      .call(ask)
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'LLM_HTTP_ERROR', details: { status: 429, attempts: 3 } });
    expect(target.hits).toBe(3);
  });
});

it('rejects bad limits, max tokens and retry settings with CONFIG_INVALID when the caller is created', () => {
  const bads: Partial<HttpCallerOptions>[] = [
    { timeoutMs: 0 },
    { idleTimeoutMs: 1.5 },
    { maxResponseBytes: -1 },
    { timeoutMs: Number.NaN },
    { timeoutMs: 2 ** 31 },
    { defaultMaxTokens: 0 },
    { retry: { maxDelayMs: 1.5 } },
    { retry: { maxRetries: 11 } },
  ];
  for (const bad of bads) {
    expect(() => createOpenAiChatCaller({ baseURL: 'http://127.0.0.1:9/v1', apiKey: 'k', ...bad })).toThrow(
      expect.objectContaining({ code: 'CONFIG_INVALID' }),
    );
  }
});
