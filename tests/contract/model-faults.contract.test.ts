/**
 * Model-side fault turns: the server answers them the same way on every wire API, records them, and never
 * leaves a connection behind when it closes.
 */
import http from 'node:http';
import { describe, expect, it } from 'vitest';
import { parseModelScript, turns } from '../../src/model/index.js';
import { startModelServer } from '../../src/engines/model-server.js';
import { waitUntil } from '../helpers/load-scaled.js';

/** A raw POST that resolves with what the client saw: status, body so far, and whether the socket failed. */
function post(
  url: string,
  path: string,
  body: unknown,
): Promise<{ status: number; text: string; error: string | null }> {
  return new Promise((resolve) => {
    let status = 0;
    let text = '';
    const request = http.request(
      `${url}${path}`,
      { method: 'POST', headers: { 'content-type': 'application/json' } },
      (response) => {
        status = response.statusCode ?? 0;
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => (text += chunk));
        response.on('end', () => resolve({ status, text, error: null }));
        response.on('error', (error) => resolve({ status, text, error: error.message }));
        response.on('aborted', () => resolve({ status, text, error: 'aborted' }));
      },
    );
    request.on('error', (error) => resolve({ status, text, error: error.message }));
    request.end(JSON.stringify(body));
  });
}

const responsesBody = { model: 'm', stream: true, input: [{ role: 'user', content: 'hi' }] };

describe('model fault turns', () => {
  it('malformed: a 200 whose SSE body no client can parse', async () => {
    const server = await startModelServer({ script: { version: 1, turns: [turns.malformed()] } });
    try {
      const seen = await post(server.url, '/v1/responses', responsesBody);
      expect(seen.status).toBe(200);
      expect(() => JSON.parse(seen.text.split('\n')[0]!.replace(/^data: /, ''))).toThrow();
      expect(server.requests[0]).toMatchObject({ response_kind: 'malformed', turn_index: 0 });
    } finally {
      await server.close();
    }
  });

  it('drop: half an event, then the connection is cut', async () => {
    const server = await startModelServer({ script: { version: 1, turns: [turns.drop()] } });
    try {
      const seen = await post(server.url, '/v1/chat/completions', {
        model: 'm',
        stream: true,
        messages: [{ role: 'user', content: 'hi' }],
      });
      expect(seen.status).toBe(200);
      expect(seen.error).not.toBeNull();
      expect(server.requests[0]?.response_kind).toBe('drop');
    } finally {
      await server.close();
    }
  });

  it('stall: headers, then silence until `ms` cuts it, or until the server closes', async () => {
    const server = await startModelServer({ script: { version: 1, turns: [turns.stall(200)] } });
    const seen = await post(server.url, '/v1/messages', {
      model: 'm',
      stream: true,
      messages: [{ role: 'user', content: 'hi' }],
    });
    expect(seen).toMatchObject({ status: 200, text: '' });
    expect(seen.error).not.toBeNull();
    server.setScript({ version: 1, turns: [turns.stall()] });
    const pending = post(server.url, '/v1/messages', {
      model: 'm',
      stream: true,
      messages: [{ role: 'user', content: 'hi' }],
    });
    // Close only once the stalled request is being held (bounded wait, no fixed sleep).
    await waitUntil(() => server.requests.length >= 2, 30_000, 10);
    expect(server.requests[1]?.response_kind).toBe('stall');
    await server.close();
    expect((await pending).error).not.toBeNull();
  });

  it('validates fault turns like any other', () => {
    expect(
      parseModelScript({ version: 1, turns: [{ type: 'stall', ms: 10 }, { type: 'drop' }, { type: 'malformed' }] })
        .turns,
    ).toHaveLength(3);
    expect(() => parseModelScript({ version: 1, turns: [{ type: 'stall', ms: -1 }] })).toThrow(
      /MODEL_SCRIPT_INVALID|not a valid model script/,
    );
  });
});
