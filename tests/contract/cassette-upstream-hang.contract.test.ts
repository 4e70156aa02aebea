/**
 * Recording when the engine's side goes away first: the upstream call is dropped, so an upstream that accepts and
 * never answers holds nothing open after the engine is killed; and an engine that closes its connection once it has
 * read what it needs (codex, after `response.completed`) gets its answer recorded as far as it went, not a failure.
 */
import http from 'node:http';
import net from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { forwardRequest } from '../../src/cassette/record.js';
import { waitUntil, within } from '../helpers/load-scaled.js';

const cleanups: Array<() => void> = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0)) cleanup();
});

function listen(server: net.Server): Promise<number> {
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => resolve((server.address() as net.AddressInfo).port)),
  );
}

/** A responses call of the engine's `req` forwarded to the upstream on `port`: what it settles with, an error too. */
function forwardTo(port: number, req: http.IncomingMessage, res: http.ServerResponse): Promise<unknown> {
  return forwardRequest({
    wire: 'openai-responses',
    origin: `http://127.0.0.1:${port}`,
    method: 'POST',
    path: '/v1/responses',
    query: new URLSearchParams(),
    headers: req.headers,
    body: '{}',
    key: 'sk-test',
    response: res,
  }).catch((error: unknown) => error);
}

describe('forwardRequest and a silent upstream', () => {
  it('drops the upstream call when the engine closes its connection, and settles with nothing captured', async () => {
    let upstreamSocket: net.Socket | null = null;
    const upstreamClosed = new Promise<void>((resolve) => {
      const silent = net.createServer((socket) => {
        upstreamSocket = socket;
        socket.on('data', () => undefined);
        socket.on('close', () => resolve());
      });
      cleanups.push(() => silent.close());
      void listen(silent).then((port) => {
        forwarded.port = port;
        portKnown();
      });
    });
    let portKnown: () => void = () => undefined;
    const forwarded: { port: number; result: Promise<unknown> | null } = { port: 0, result: null };
    await new Promise<void>((resolve) => {
      portKnown = resolve;
    });
    const front = http.createServer((req, res) => {
      forwarded.result = forwardTo(forwarded.port, req, res);
    });
    cleanups.push(() => front.close());
    const frontPort = await listen(front);
    const engine = http.request({ host: '127.0.0.1', port: frontPort, method: 'POST', path: '/v1/responses' });
    engine.on('error', () => undefined);
    engine.end('{}');
    await waitUntil(() => upstreamSocket !== null, 10_000, 50);
    expect(upstreamSocket).not.toBeNull();
    // The engine is killed: its connection goes.
    engine.destroy();
    const bounded = <T>(promise: Promise<T>, what: string): Promise<T> => within(promise, 20_000, what);
    await bounded(upstreamClosed, 'the upstream connection closing');
    const outcome = await bounded(forwarded.result!, 'forwardRequest settling');
    expect(outcome).toBeNull();
  });

  it('an engine that closes its connection while the upstream still streams gets what came so far recorded', async () => {
    let finishUpstream: () => void = () => undefined;
    const upstream = http.createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write('data: {"type":"response.completed"}\n\n');
      // The upstream ends its response only later (or never); the engine has what it needs.
      finishUpstream = () => res.end();
    });
    cleanups.push(() => {
      finishUpstream();
      upstream.close();
    });
    const upstreamPort = await listen(upstream);
    let result: Promise<unknown> | null = null;
    const front = http.createServer((req, res) => {
      result = forwardTo(upstreamPort, req, res);
    });
    cleanups.push(() => front.close());
    const frontPort = await listen(front);
    const read = new Promise<void>((resolve) => {
      const engine = http.request(
        { host: '127.0.0.1', port: frontPort, method: 'POST', path: '/v1/responses' },
        (res) =>
          res.on('data', (chunk: Buffer) => {
            if (chunk.toString().includes('response.completed')) {
              engine.destroy();
              resolve();
            }
          }),
      );
      engine.on('error', () => undefined);
      engine.end('{}');
    });
    await read;
    await waitUntil(() => result !== null, 20_000, 50);
    const outcome = (await (result as Promise<unknown> | null)) as {
      status: number;
      complete: boolean;
      chunks: Array<{ data: string }>;
    };
    expect(outcome).toMatchObject({ status: 200, complete: true });
    expect(outcome.chunks.map((chunk) => chunk.data).join('')).toContain('response.completed');
  });
});
