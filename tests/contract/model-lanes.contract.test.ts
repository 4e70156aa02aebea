/**
 * Attempt lanes of the scripted model server (`openLane`), driven with fetch: attempts that share one server each
 * get their own script position and their own request list through a base URL with their key, even when all are in
 * flight together; a closed lane is a 404, and a lane without a script starts from the server's.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { turns, type ModelScript, type ModelServer } from '../../src/model/index.js';
import { startModelServer } from '../../src/engines/model-server.js';

const servers: ModelServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

/** Posts a plain (non-streamed) Responses request to `base` and returns the assistant text and the status. */
async function ask(
  base: string,
  input: unknown[],
  model = 'm',
): Promise<{ status: number; text: string | null; body: any }> {
  const response = await fetch(`${base}/v1/responses`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model, input }),
  });
  const body = (await response.json()) as any;
  const message = body.output?.find((item: any) => item.type === 'message');
  return { status: response.status, text: message?.content?.[0]?.text ?? null, body };
}

const user = (text: string) => ({ type: 'message', role: 'user', content: [{ type: 'input_text', text }] });
const assistant = (text: string) => ({ type: 'message', role: 'assistant', content: [{ type: 'output_text', text }] });

describe('attempt lanes', () => {
  it('eight lanes in flight together each answer from their own script, turn by turn, and record only their own', async () => {
    const server = await startModelServer({ tools: [], script: { version: 1, turns: [turns.text('server')] } });
    servers.push(server);
    // Every lane's first turn waits on one gate of size 8: all eight requests are held until all have arrived.
    const script = (i: number): ModelScript => ({
      version: 1,
      // Main turns: the second request (another model, one model turn in its history) takes turn 2.
      turns: [turns.text(`lane ${i} unused`), turns.text(`lane ${i} turn 2`)],
      routes: [
        {
          match: { model: 'gated' },
          gate: { name: 'together', size: 8, timeout_ms: 60_000 },
          turns: [turns.text(`lane ${i} turn 1`)],
        },
      ],
    });
    const lanes = Array.from({ length: 8 }, (_, i) => server.openLane(script(i)));
    expect(new Set(lanes.map((lane) => lane.key)).size).toBe(8);
    for (const lane of lanes) expect(lane.url).toBe(`${server.url}/__attempt/${lane.key}`);

    const first = await Promise.all(lanes.map((lane) => ask(lane.url, [user('first')], 'gated')));
    expect(first.map((r) => r.text)).toEqual(lanes.map((_, i) => `lane ${i} turn 1`));
    const second = await Promise.all(
      lanes.map((lane, i) => ask(lane.url, [user('first'), assistant(`lane ${i} turn 1`), user('then')])),
    );
    expect(second.map((r) => r.text)).toEqual(lanes.map((_, i) => `lane ${i} turn 2`));

    lanes.forEach((lane, i) => {
      expect(lane.requests).toHaveLength(2);
      for (const row of lane.requests) {
        expect(row).toMatchObject({ lane: lane.key, path: '/v1/responses', wire: 'openai-responses', status: 200 });
      }
      expect(lane.requests[0]!.gate).toMatchObject({ name: 'together', released_with: 8, timed_out: false });
      expect(lane.requests.map((row) => row.turn_index)).toEqual([0, 1]);
      expect(lane.script?.turns[1]).toMatchObject({ text: `lane ${i} turn 2` });
      expect(lane.requests[1]!.gate).toBeUndefined();
    });
    expect(server.requests).toHaveLength(16);
    // The server's own script is untouched and still answers requests without a lane.
    expect((await ask(server.url, [user('plain')])).text).toBe('server');
    expect(server.requests.at(-1)!.lane).toBeUndefined();
  });

  it('a lane opened without a script starts from the server script; its own setScript and appendTurns stay its own', async () => {
    const server = await startModelServer({ tools: [], script: { version: 1, turns: [turns.text('shared')] } });
    servers.push(server);
    const lane = server.openLane();
    expect((await ask(lane.url, [user('hi')])).text).toBe('shared');
    lane.setScript({ version: 1, turns: [turns.text('mine')] });
    lane.appendTurns([turns.text('mine again')]);
    expect((await ask(lane.url, [user('hi')])).text).toBe('mine');
    expect((await ask(lane.url, [user('hi'), assistant('mine'), user('more')])).text).toBe('mine again');
    expect((await ask(server.url, [user('hi')])).text).toBe('shared');
    expect(server.script?.turns).toHaveLength(1);
  });

  it('a closed or unknown lane is a 404 that names it, recorded without a lane', async () => {
    const server = await startModelServer({ tools: [] });
    servers.push(server);
    const lane = server.openLane({ version: 1, turns: [turns.text('open')] });
    expect((await ask(lane.url, [user('hi')])).text).toBe('open');
    lane.close();
    const closed = await ask(lane.url, [user('hi')]);
    expect(closed.status).toBe(404);
    expect(closed.body.error.message).toContain(`no open attempt lane "${lane.key}"`);
    expect((await ask(`${server.url}/__attempt/nobody`, [user('hi')])).status).toBe(404);
    expect(lane.requests).toHaveLength(1);
    expect(server.requests.at(-1)).toMatchObject({ status: 404, response_kind: 'not_found' });
    expect(server.requests.at(-1)!.lane).toBeUndefined();
  });
});
