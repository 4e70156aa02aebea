import { afterEach, describe, expect, it } from 'vitest';
import { matchRoute, parseModelScript, selectTurn, type ModelServer } from '../../src/model/index.js';
import { startModelServer } from '../../src/engines/model-server.js';

const script = parseModelScript({
  version: 1,
  turns: [{ type: 'text', text: 'main' }],
  routes: [
    { match: { model: 'a', contains: 'MARK' }, turns: [{ type: 'text', text: 'a+mark' }] },
    {
      match: { model: 'a' },
      turns: [
        { type: 'text', text: 'a0' },
        { type: 'text', text: 'a1' },
      ],
    },
    { match: { contains: '[phase:b]' }, gate: { name: 'g', size: 2 }, turns: [{ type: 'text', text: 'b' }] },
  ],
});

let server: ModelServer | null = null;
afterEach(async () => {
  await server?.close();
  server = null;
});

async function chat(body: object): Promise<{ status: number; text: string }> {
  const response = await fetch(`${server!.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const json = (await response.json()) as { choices?: { message: { content: string } }[] };
  return { status: response.status, text: json.choices?.[0]?.message.content ?? '' };
}

describe('model script routes', () => {
  it('picks the first matching route; all given match fields must hold; no match falls back to turns', () => {
    expect(matchRoute(script, { model: 'a', messages: [{ role: 'user', content: 'MARK' }] })?.turns[0]).toEqual({
      type: 'text',
      text: 'a+mark',
    });
    expect(selectTurn(script, 1, { model: 'a' })).toEqual({
      kind: 'turn',
      index: 1,
      turn: { type: 'text', text: 'a1' },
    });
    expect(selectTurn(script, 2, { model: 'a' })).toEqual({ kind: 'exhausted', index: 2, total: 2 });
    expect(selectTurn(script, 0, { model: 'z' })).toMatchObject({ turn: { text: 'main' } });
    expect(selectTurn(script, 0)).toMatchObject({ turn: { text: 'main' } });
  });

  it('rejects a route without a match field and keeps scripts without routes valid', () => {
    expect(() => parseModelScript({ version: 1, turns: [], routes: [{ match: {}, turns: [] }] })).toThrow(
      expect.objectContaining({ code: 'MODEL_SCRIPT_INVALID' }),
    );
    expect(parseModelScript({ version: 1, turns: [] }).routes).toBeUndefined();
  });

  it('serves route turns by model over HTTP and records started_ts', async () => {
    server = await startModelServer({ script });
    expect(
      await chat({
        model: 'a',
        messages: [
          { role: 'user', content: 'hi' },
          { role: 'assistant', content: 'x' },
          { role: 'user', content: 'again' },
        ],
      }),
    ).toEqual({ status: 200, text: 'a1' });
    expect(await chat({ model: 'other', messages: [{ role: 'user', content: 'hi' }] })).toEqual({
      status: 200,
      text: 'main',
    });
    const [first] = server.requests;
    expect(first!.turn_index).toBe(1);
    expect(Date.parse(first!.started_ts!)).toBeLessThanOrEqual(Date.parse(first!.ts));
    expect(first!.gate).toBeUndefined();
  });

  it('a gate answers its requests together once `size` are waiting, and records the release', async () => {
    server = await startModelServer({ script });
    const body = {
      model: 'x',
      messages: [
        { role: 'system', content: '[phase:b]' },
        { role: 'user', content: 'q' },
      ],
    };
    const first = chat(body);
    // The first request is held until the second arrives: it cannot have been recorded yet.
    const second = chat(body);
    expect(await Promise.all([first, second])).toEqual([
      { status: 200, text: 'b' },
      { status: 200, text: 'b' },
    ]);
    expect(server.requests.map((r) => r.gate)).toEqual([
      { name: 'g', released_with: 2, timed_out: false },
      { name: 'g', released_with: 2, timed_out: false },
    ]);
  });

  it('a lone request on a gate is answered after the gate timeout, marked timed_out', async () => {
    server = await startModelServer({
      script: parseModelScript({
        version: 1,
        turns: [],
        routes: [
          {
            match: { model: 'solo' },
            gate: { name: 'g', size: 2, timeout_ms: 50 },
            turns: [{ type: 'text', text: 'late' }],
          },
        ],
      }),
    });
    expect(await chat({ model: 'solo', messages: [{ role: 'user', content: 'q' }] })).toEqual({
      status: 200,
      text: 'late',
    });
    expect(server.requests[0]!.gate).toEqual({ name: 'g', released_with: 1, timed_out: true });
  });
});
