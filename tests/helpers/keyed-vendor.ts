/**
 * A local "vendor" for cassette tests: a scripted model server on its own loopback port behind a front that checks
 * the key each request carries (Bearer, x-api-key, x-goog-api-key or `?key=`), as the real vendors do, and answers
 * 401 otherwise. Nothing leaves 127.0.0.1.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ModelScript, ModelServer } from '../../src/model/index.js';
import { startModelServer } from '../../src/engines/model-server.js';

/** A running keyed vendor. */
export interface KeyedVendor {
  /** `http://127.0.0.1:PORT`: pass it as the upstream. */
  url: string;
  /** The scripted server behind the key check (its `requests` are what the vendor answered). */
  model: ModelServer;
  /** Requests refused for a wrong or missing key. */
  refused: number;
  /** Requests let through. */
  accepted: number;
  close(): Promise<void>;
}

/** The key a request carries, in any of the vendors' forms; null when none. */
function keyOf(request: http.IncomingMessage): string | null {
  const bearer = /^Bearer (.+)$/.exec(String(request.headers.authorization ?? ''))?.[1];
  const header = request.headers['x-api-key'] ?? request.headers['x-goog-api-key'];
  const query = new URL(request.url ?? '/', 'http://127.0.0.1').searchParams.get('key');
  return bearer ?? (typeof header === 'string' ? header : null) ?? query;
}

/** Starts a vendor that accepts `key` only and answers from `script`. */
export async function startKeyedVendor(key: string, script: ModelScript): Promise<KeyedVendor> {
  const model = await startModelServer({ script });
  const target = new URL(model.url);
  const vendor: KeyedVendor = {
    url: '',
    model,
    refused: 0,
    accepted: 0,
    close: async () => undefined,
  };
  const front = http.createServer((request, response) => {
    if (keyOf(request) !== key) {
      vendor.refused += 1;
      request.resume();
      response.writeHead(401, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ error: { message: 'invalid api key', type: 'invalid_api_key' } }));
      return;
    }
    vendor.accepted += 1;
    const upstream = http.request(
      { host: target.hostname, port: target.port, path: request.url, method: request.method, headers: request.headers },
      (answer) => {
        response.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(response);
      },
    );
    upstream.on('error', () => response.destroy());
    request.pipe(upstream);
  });
  await new Promise<void>((resolve) => front.listen(0, '127.0.0.1', () => resolve()));
  vendor.url = `http://127.0.0.1:${(front.address() as AddressInfo).port}`;
  vendor.close = async () => {
    await new Promise<void>((resolve) => {
      front.close(() => resolve());
      front.closeAllConnections();
    });
    await model.close();
  };
  return vendor;
}
