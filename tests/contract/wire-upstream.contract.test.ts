/**
 * Each wire module owns its vendor's upstream (origin, key variables, auth header), and a recording signs a request
 * the way that vendor expects: a request that carries no credential of its own gets the user's key in the wire's
 * header (OpenAI: `authorization: Bearer`, Anthropic: `x-api-key`, Gemini: `x-goog-api-key`).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { DEFAULT_UPSTREAMS, forwardRequest, KEY_VARIABLES } from '../../src/cassette/record.js';
import { WIRE_APIS } from '../../src/model/server.js';

/** What each vendor expects, as its own documentation states it (not read from the modules under test). */
const VENDORS = {
  'openai-responses': { origin: 'https://api.openai.com', key: 'OPENAI_API_KEY', header: 'authorization' },
  'openai-chat': { origin: 'https://api.openai.com', key: 'OPENAI_API_KEY', header: 'authorization' },
  'anthropic-messages': { origin: 'https://api.anthropic.com', key: 'ANTHROPIC_API_KEY', header: 'x-api-key' },
  gemini: { origin: 'https://generativelanguage.googleapis.com', key: 'GEMINI_API_KEY', header: 'x-goog-api-key' },
} as const;

const servers: http.Server[] = [];
afterEach(() => {
  for (const server of servers.splice(0)) server.close();
});

/** Starts a server on 127.0.0.1 and returns its origin. */
async function listen(handler: http.RequestListener): Promise<string> {
  const server = http.createServer(handler);
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

describe('wire upstreams', () => {
  it('every wire the model server speaks names its upstream, and the recording reads it from there', () => {
    expect(WIRE_APIS.map((wire) => wire.id).sort()).toEqual(Object.keys(VENDORS).sort());
    for (const wire of WIRE_APIS) {
      const vendor = VENDORS[wire.id];
      expect(wire.upstream.origin, wire.id).toBe(vendor.origin);
      expect(wire.upstream.keyVariables[0], wire.id).toBe(vendor.key);
      expect(DEFAULT_UPSTREAMS[wire.id], wire.id).toBe(vendor.origin);
      expect(KEY_VARIABLES[wire.id], wire.id).toEqual(wire.upstream.keyVariables);
    }
  });

  it.each(Object.entries(VENDORS))(
    'a %s request without a credential is forwarded with the key in the vendor header',
    async (id, vendor) => {
      const seen: http.IncomingHttpHeaders[] = [];
      const upstream = await listen((req, res) => {
        seen.push(req.headers);
        req.resume();
        req.on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end('{}'));
      });
      const front = await listen((req, res) => {
        const headers = { ...req.headers };
        void forwardRequest({
          wire: id as keyof typeof VENDORS,
          origin: upstream,
          method: 'POST',
          path: '/v1/x',
          query: new URLSearchParams(),
          headers,
          body: '{}',
          key: 'sk-user-key',
          response: res,
        });
      });
      const answer = await fetch(`${front}/v1/x`, { method: 'POST', body: '{}' });
      expect(answer.status).toBe(200);
      await answer.text();
      expect(seen).toHaveLength(1);
      const expected = vendor.header === 'authorization' ? 'Bearer sk-user-key' : 'sk-user-key';
      expect(seen[0]![vendor.header]).toBe(expected);
      for (const other of ['authorization', 'x-api-key', 'x-goog-api-key'].filter((h) => h !== vendor.header))
        expect(seen[0]![other], other).toBeUndefined();
    },
  );
});
