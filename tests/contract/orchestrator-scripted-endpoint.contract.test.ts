import { afterEach, expect, it } from 'vitest';
import { parseModelScript } from '../../src/model/index.js';
import { bindModel, startScriptedEndpoint, type ScriptedEndpoint } from '../../src/orchestrator/index.js';

let endpoint: ScriptedEndpoint | null = null;
afterEach(async () => {
  await endpoint?.close();
  endpoint = null;
});

it.each(['openai-chat', 'anthropic-messages'] as const)(
  'startScriptedEndpoint gives a real %s caller on the scripted server',
  async (wire) => {
    const script = parseModelScript({
      version: 1,
      turns: [],
      routes: [{ match: { model: 'helper' }, turns: [{ type: 'text', text: 'from route' }] }],
    });
    endpoint = await startScriptedEndpoint(script, { wire });
    const response = await bindModel(endpoint.caller, 'helper').call({ messages: [{ role: 'user', content: 'hi' }] });
    expect(response.text).toBe('from route');
    expect(endpoint.server.requests.map((r) => [r.wire, (r.body as { model: string }).model])).toEqual([
      [wire, 'helper'],
    ]);
  },
);
