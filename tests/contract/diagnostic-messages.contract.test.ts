/**
 * What a user reads when something did not go as scripted: the matchers' transcript shows each tool call's kind,
 * name and command (not an empty `tool.call:` line), and a request the scripted model cannot answer names the
 * request (method, path, wire, model) and the route it used — or that it matched none of the script's routes.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { type ModelServer, exhaustedMessage, parseModelScript } from '../../src/model/index.js';
import { startModelServer } from '../../src/engines/model-server.js';
import type { FcmpEvent } from '../../src/protocol/index.js';
import { type AgentOutcomeLike, installMatchers, transcript } from '../../src/vitest/matchers.js';

installMatchers();

let seq = 0;
function ev(type: FcmpEvent['type'], data: Record<string, unknown>): FcmpEvent {
  seq += 1;
  return {
    protocol_version: 'fcmp/1.0',
    run_id: 'r1',
    seq,
    ts: '2026-11-23T00:00:00.000Z',
    engine: 'claude',
    session_id: null,
    meta: { attempt: 1 },
    raw_ref: null,
    type,
    data,
  } as FcmpEvent;
}

const outcome: AgentOutcomeLike = {
  completion: { state: 'completed', reason: 'done_marker' },
  fcmp: [
    ev('conversation.started', { launch: 'start' }),
    ev('tool.call', { call_id: 'c1', kind: 'shell', name: 'Bash', command: 'printf hi > x.txt', input_excerpt: null }),
    ev('tool.result', { call_id: 'c1', status: 'completed', exit_code: 0, output_excerpt: '' }),
    ev('tool.call', {
      call_id: 'c2',
      kind: 'mcp',
      name: 'mcp__echo__echo',
      command: null,
      input_excerpt: '{"text":"ping"}',
    }),
    ev('tool.result', { call_id: 'c2', status: 'failed', exit_code: null, output_excerpt: 'echo: boom' }),
    ev('tool.call', { call_id: 'c3', kind: 'other', name: 'TodoWrite', command: null, input_excerpt: null }),
    ev('conversation.completed', { reason: 'done_marker' }),
  ],
  toolCalls: [],
  audit: { dir: '/runs/r1/.audit' },
};

describe('matcher transcripts', () => {
  it("show each tool call's kind, name and command or input, and each result's status", () => {
    const text = transcript(outcome);
    expect(text).toContain('  tool.call: shell Bash: printf hi > x.txt\n');
    expect(text).toContain('  tool.result: completed, exit 0\n');
    expect(text).toContain('  tool.call: mcp mcp__echo__echo: {"text":"ping"}\n');
    expect(text).toContain('  tool.result: failed: echo: boom\n');
    expect(text).toContain('  tool.call: other TodoWrite\n');
    expect(text).not.toMatch(/tool\.(call|result): *\n/);
  });

  it('reach a failing matcher message', () => {
    expect(() => expect(outcome).toHaveFcmpSequence(['conversation.failed'])).toThrow(
      /tool\.call: shell Bash: printf hi > x\.txt/,
    );
  });
});

describe('scripted model: a request it cannot answer', () => {
  let server: ModelServer | null = null;
  afterEach(async () => {
    await server?.close();
    server = null;
  });

  const script = parseModelScript({
    version: 1,
    turns: [],
    routes: [
      { match: { model: 'intent-small' }, turns: [{ type: 'text', text: 'intent' }] },
      { match: { contains: '[assistant:respond]' }, turns: [{ type: 'text', text: 'reply' }] },
    ],
  });

  async function chat(body: object): Promise<{ status: number; message: string }> {
    const response = await fetch(`${server!.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    const json = (await response.json()) as { error?: { message?: string } };
    return { status: response.status, message: json.error?.message ?? '' };
  }

  it('names the request and every route when it matched none (not "script exhausted")', async () => {
    server = await startModelServer({ script });
    const answer = await chat({ model: 'other-model', messages: [{ role: 'user', content: 'hi' }] });
    expect(answer.status).toBe(400);
    expect(answer.message).toBe(
      'no scripted route matched request POST /v1/chat/completions (openai-chat wire, model "other-model"): it matched none of the script\'s 2 routes (route 1 {"model":"intent-small"}, route 2 {"contains":"[assistant:respond]"}), so it fell back to the main `turns`, which has 0 turns; the request needs turn 1. Add a route whose match fits this request (its `model`, or a `contains` substring of its body), or turns to the main list.',
    );
    expect(server.requests.at(-1)).toMatchObject({ status: 400, response_kind: 'exhausted' });
  });

  it('names the route a request used up', async () => {
    server = await startModelServer({ script });
    const answer = await chat({
      model: 'intent-small',
      messages: [
        { role: 'user', content: 'hi' },
        { role: 'assistant', content: 'intent' },
        { role: 'user', content: 'again' },
      ],
    });
    expect(answer.status).toBe(400);
    expect(answer.message).toMatch(
      /^script exhausted: request POST \/v1\/chat\/completions \(openai-chat wire, model "intent-small"\) matched route 1 of 2 \(\{"model":"intent-small"\}\), which has 1 turns; the request needs turn 2\. Add turns to that route\./,
    );
  });

  it('names the request in a script without routes, keeping the message it had', () => {
    const message = exhaustedMessage(1, 1, {
      script: parseModelScript({ version: 1, turns: [{ type: 'text', text: 'one' }] }),
      request: { method: 'POST', path: '/v1/responses', wire: 'openai-responses', body: { model: 'gpt-x' } },
    });
    expect(message).toMatch(/^script exhausted: request needs turn 2 but the script has 1 turns\. /);
    expect(message).toMatch(/ The request: POST \/v1\/responses \(openai-responses wire, model "gpt-x"\)\.$/);
  });
});
