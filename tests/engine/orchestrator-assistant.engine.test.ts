/**
 * The example assistant over real HTTP: the official openai and @anthropic-ai/sdk clients against the
 * scripted model server (no engine CLI). The server's request log is the evidence.
 */
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadModelScript, type ModelServer, type RecordedRequest } from '../../src/model/index.js';
import { startModelServer } from '../../src/engines/model-server.js';
import { buildAssistantConfig } from '../../examples/assistant/config.js';
import { createAssistant, createWireCaller, type AssistantWire } from '../../examples/assistant/factory.js';
import { scaled } from '../helpers/load-scaled.js';

const SCRIPT = path.resolve('examples/assistant/demo-script.json');
let server: ModelServer | null = null;
afterEach(async () => {
  await server?.close();
  server = null;
});

/** Text of a request body, whatever the wire (system field or messages). */
function bodyText(request: RecordedRequest): string {
  return JSON.stringify(request.body);
}

const cases: { wire: AssistantWire; stream: boolean; path: string }[] = [
  { wire: 'openai-chat', stream: false, path: '/v1/chat/completions' },
  { wire: 'anthropic-messages', stream: true, path: '/v1/messages' },
  { wire: 'openai-chat', stream: true, path: '/v1/chat/completions' },
  { wire: 'anthropic-messages', stream: false, path: '/v1/messages' },
];

describe.each(cases)('example assistant over $wire (stream: $stream)', ({ wire, stream, path: wirePath }) => {
  it('answers a three-turn conversation; the request log proves models, overlap and recall', async () => {
    server = await startModelServer({ script: await loadModelScript(SCRIPT) });
    const config = buildAssistantConfig({ stream });
    const assistant = createAssistant(createWireCaller(wire, server.url, 'scripted-no-key', config), config);
    const messages = ['My favourite colour is teal.', 'Which colour did I say was my favourite?', 'Thanks, bye.'];
    const replies: (string | null)[] = [];
    for (const message of messages) {
      const outcome = await assistant.orchestrator.run(message);
      expect(outcome.error).toBeUndefined();
      replies.push(outcome.reply);
    }
    expect(replies).toEqual([
      'Hello! I read your first message.',
      'Thanks for the second message; I remember your first one.',
      'Third reply: we have talked three times now.',
    ]);

    const log = server.requests;
    expect(log.every((r) => r.path === wirePath && r.status === 200)).toBe(true);
    expect(
      log.every(
        (r) =>
          (r.body as { stream?: boolean }).stream === stream ||
          (!stream && (r.body as { stream?: boolean }).stream === undefined),
      ),
    ).toBe(true);
    // Right model per phase: each marker-bearing prompt went to its phase's model.
    const byModel = (model: string) => log.filter((r) => (r.body as { model: string }).model === model);
    expect(byModel('intent-small').every((r) => bodyText(r).includes('[assistant:intent]'))).toBe(true);
    expect(byModel('memory-small').every((r) => bodyText(r).includes('[assistant:memory]'))).toBe(true);
    expect(byModel('respond-large').every((r) => bodyText(r).includes('[assistant:respond]'))).toBe(true);
    expect([byModel('intent-small').length, byModel('memory-small').length, byModel('respond-large').length]).toEqual([
      3, 3, 3,
    ]);
    expect(log).toHaveLength(9);

    for (let turn = 0; turn < 3; turn += 1) {
      const intent = byModel('intent-small')[turn]!;
      const memory = byModel('memory-small')[turn]!;
      const respond = byModel('respond-large')[turn]!;
      // Overlap: the gate released both together, and each started before the other was answered.
      expect(intent.gate).toEqual({ name: 'gather', released_with: 2, timed_out: false });
      expect(memory.gate).toEqual({ name: 'gather', released_with: 2, timed_out: false });
      expect(Date.parse(intent.started_ts!)).toBeLessThanOrEqual(Date.parse(memory.ts));
      expect(Date.parse(memory.started_ts!)).toBeLessThanOrEqual(Date.parse(intent.ts));
      // Respond waits for both.
      expect(respond.seq).toBeGreaterThan(Math.max(intent.seq, memory.seq));
      expect(Date.parse(respond.started_ts!)).toBeGreaterThanOrEqual(
        Math.max(Date.parse(intent.ts), Date.parse(memory.ts)),
      );
      expect(respond.turn_index).toBe(turn);
    }
    // The second turn's prompt carries what memory recalled from the first.
    const secondRespond = bodyText(byModel('respond-large')[1]!);
    expect(secondRespond).toMatch(/Memories:\\n- user: My favourite colour is teal\./);
    expect(bodyText(byModel('memory-small')[1]!)).toContain('- user: My favourite colour is teal.');
    expect(bodyText(byModel('respond-large')[0]!)).toContain('Memories:\\n- (none)');

    const stats = assistant.recordKeeper.statistics();
    expect(stats.turns).toEqual({ user: 3, assistant: 3 });
    expect(stats.phases.respond).toMatchObject({ runs: 3, calls: 3, errors: 0 });
    expect(stats.phases.respond!.outputTokens).toBeGreaterThan(0);
  });
});

describe('examples/assistant/main.ts', () => {
  it('prints both replies and the per-phase statistics table, exits 0, with no key in the environment', async () => {
    const { execa } = await import('execa');
    const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !/API_KEY|_TOKEN|PROXY/i.test(name)));
    const result = await execa(
      'npx',
      [
        'tsx',
        'examples/assistant/main.ts',
        '--script',
        'examples/assistant/demo-script.json',
        'first message',
        'second message',
      ],
      { env, extendEnv: false, reject: false, timeout: scaled(120_000) },
    );
    expect(result.exitCode, result.stderr).toBe(0);
    expect(result.stdout).toContain('> first message\nHello! I read your first message.');
    expect(result.stdout).toContain('> second message\nThanks for the second message; I remember your first one.');
    expect(result.stdout).toMatch(/^phase\s+runs\s+calls\s+tokens in\s+tokens out\s+latency ms\s+errors$/m);
    for (const phase of ['intent', 'memory', 'respond', 'recover'])
      expect(result.stdout).toMatch(new RegExp(`^${phase}\\s+2\\s`, 'm'));
    expect(result.stdout).toContain('turns: 2 user, 2 assistant');
  });

  it('exits non-zero with USAGE_ERROR when neither --script nor --base-url is given', async () => {
    const { execa } = await import('execa');
    const result = await execa('npx', ['tsx', 'examples/assistant/main.ts', 'hi'], {
      reject: false,
      timeout: scaled(120_000),
    });
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toContain('USAGE_ERROR');
  });
});

describe('intent loop over HTTP', () => {
  it('refines over two requests (the second replays the first answer) and stops on done', async () => {
    const demo = await loadModelScript(SCRIPT);
    const refine = {
      match: { model: 'intent-small', contains: 'Iteration 2 of' },
      turns: [
        { type: 'text' as const, text: 'unused: index 0 never matches this route' },
        { type: 'text' as const, text: '{"intent":"colour question","topics":["colour"],"done":true}' },
      ],
    };
    const first = {
      ...demo.routes![0]!,
      turns: [{ type: 'text' as const, text: '{"intent":"question","done":false}' }],
    };
    server = await startModelServer({ script: { ...demo, routes: [refine, first, ...demo.routes!.slice(1)] } });
    const config = buildAssistantConfig();
    const assistant = createAssistant(createWireCaller('openai-chat', server.url, 'scripted-no-key', config), config);
    const outcome = await assistant.orchestrator.run('Which colour?');
    expect(outcome.error).toBeUndefined();
    expect(outcome.phases.intent?.output).toEqual({ intent: 'colour question', topics: ['colour'], done: true });
    expect(outcome.phases.intent?.trace.notes).toEqual({ iterations: 2, stopReason: 'done' });
    const intents = server.requests.filter((r) => (r.body as { model: string }).model === 'intent-small');
    expect(intents.map((r) => r.turn_index)).toEqual([0, 1]);
    expect(JSON.stringify(intents[1]!.body)).toContain('{\\"intent\\":\\"question\\",\\"done\\":false}');
    expect(
      JSON.stringify(server.requests.find((r) => (r.body as { model: string }).model === 'respond-large')!.body),
    ).toContain('Intent: colour question');
  });
});
