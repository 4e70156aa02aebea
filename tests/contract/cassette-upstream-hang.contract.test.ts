/**
 * Recording against an upstream that accepts and never answers: when the engine's side goes away (killed at its
 * timeout), the upstream call is dropped and fails CASSETTE_UPSTREAM_FAILED, so nothing holds the harness open.
 */
import http from 'node:http';
import net from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { forwardRequest } from '../../src/cassette/record.js';
import { isAgentHarnessError } from '../../src/errors/index.js';

const cleanups: Array<() => void> = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0)) cleanup();
});

function listen(server: net.Server): Promise<number> {
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => resolve((server.address() as net.AddressInfo).port)),
  );
}

describe('forwardRequest and a silent upstream', () => {
  it('drops the upstream call when the engine closes its connection, and rejects CASSETTE_UPSTREAM_FAILED', async () => {
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
      forwarded.result = forwardRequest({
        wire: 'openai-responses',
        origin: `http://127.0.0.1:${forwarded.port}`,
        method: 'POST',
        path: '/v1/responses',
        query: new URLSearchParams(),
        headers: req.headers,
        body: '{}',
        key: 'sk-test',
        response: res,
      }).then(
        () => 'resolved',
        (error: unknown) => error,
      );
    });
    cleanups.push(() => front.close());
    const frontPort = await listen(front);
    const engine = http.request({ host: '127.0.0.1', port: frontPort, method: 'POST', path: '/v1/responses' });
    engine.on('error', () => undefined);
    engine.end('{}');
    for (let i = 0; i < 200 && upstreamSocket === null; i += 1) await new Promise((r) => setTimeout(r, 50));
    expect(upstreamSocket).not.toBeNull();
    // The engine is killed: its connection goes.
    engine.destroy();
    const bounded = <T>(promise: Promise<T>, what: string): Promise<T> =>
      Promise.race([
        promise,
        new Promise<T>((_, reject) => setTimeout(() => reject(new Error(`${what} never happened`)), 20_000).unref()),
      ]);
    await bounded(upstreamClosed, 'the upstream connection closing');
    const outcome = await bounded(forwarded.result!, 'forwardRequest settling');
    expect(isAgentHarnessError(outcome) && outcome.code).toBe('CASSETTE_UPSTREAM_FAILED');
  });
});
