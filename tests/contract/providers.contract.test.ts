/**
 * Provider contracts with no engine process: config validation, the registry, and capabilities refused by name.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { engineIds } from '../../src/engines/registry.js';
import { isAgentHarnessError } from '../../src/errors/index.js';
import {
  getProvider,
  parseProviderConfig,
  providerNames,
  registerProvider,
  type AgentProviderConfig,
} from '../../src/providers/index.js';

async function firstError(iterable: AsyncIterable<unknown>): Promise<unknown> {
  try {
    for await (const _ of iterable) {
      /* drain */
    }
  } catch (error) {
    return error;
  }
  return null;
}

describe('providers', () => {
  it('has a provider for every engine; an unknown one is ENGINE_UNKNOWN listing the known', () => {
    expect(providerNames()).toEqual(expect.arrayContaining(engineIds()));
    for (const id of engineIds()) expect(getProvider(id).name).toBe(id);
    let error: unknown;
    try {
      getProvider('gpt-cli');
    } catch (e) {
      error = e;
    }
    expect(isAgentHarnessError(error, 'ENGINE_UNKNOWN')).toBe(true);
    expect((error as Error).message).toContain('Known providers: codex');
    registerProvider({
      name: 'custom',
      async *query() {
        yield { type: 'complete', result: { success: true } };
      },
    });
    expect(getProvider('custom').name).toBe('custom');
  });

  it('validates the config with zod, naming the bad field', () => {
    expect(parseProviderConfig({ provider: 'codex', prompt: 'hi' })).toMatchObject({
      mcpServers: [],
      permissionMode: 'bypassPermissions',
      allowedTools: [],
    });
    for (const [bad, field] of [
      [{ provider: 'codex', prompt: '' }, 'prompt'],
      [{ provider: 'nope', prompt: 'x' }, 'provider'],
      [{ provider: 'codex', prompt: 'x', permissionMode: 'yolo' }, 'permissionMode'],
      [{ provider: 'codex', prompt: 'x', mcpServers: [{ name: 'm' }] }, 'mcpServers.0'],
      [{ provider: 'codex', prompt: 'x', signal: 'stop' }, 'signal'],
    ] as const) {
      let error: unknown;
      try {
        parseProviderConfig(bad);
      } catch (e) {
        error = e;
      }
      expect(isAgentHarnessError(error, 'CONFIG_INVALID'), field).toBe(true);
      expect((error as Error).message).toContain(`AgentProviderConfig.${field}`);
    }
  });

  const ASKS: Record<string, Partial<AgentProviderConfig>> = {
    mcpServers: { mcpServers: [{ name: 'm', command: ['node', 'server.js'] }] },
    permissionMode: { permissionMode: 'plan' },
    allowedTools: { allowedTools: ['Bash'] },
    disallowedTools: { disallowedTools: ['Bash'] },
    systemPrompt: { systemPrompt: 'be brief' },
    maxTurns: { maxTurns: 3 },
  };
  it.for([
    ['codex', 'allowedTools'],
    ['codex', 'disallowedTools'],
    ['codex', 'maxTurns'],
    ...Object.keys(ASKS).map((capability) => ['iflow', capability]),
  ] as Array<[string, string]>)(
    '%s refuses %s with ENGINE_CAPABILITY_UNAVAILABLE naming engine and capability, before any run',
    async ([engine, capability]) => {
      const runRoot = path.join(os.tmpdir(), `ah-refused-${engine}-${capability}`);
      const error = await firstError(
        getProvider(engine).query({ provider: engine, prompt: 'hi', ...ASKS[capability], extra: { runRoot } }),
      );
      expect(isAgentHarnessError(error, 'ENGINE_CAPABILITY_UNAVAILABLE')).toBe(true);
      expect((error as { details?: Record<string, unknown> }).details).toMatchObject({
        engine,
        capability: expect.stringContaining(capability),
      });
      expect(fs.existsSync(runRoot)).toBe(false);
    },
  );

  it('a cassette mode is checked before any run: no cassette, a missing one, no key to record', async () => {
    const runRoot = path.join(os.tmpdir(), 'ah-provider-cassette-refused');
    const ask = (extra: Record<string, unknown>) =>
      firstError(getProvider('claude').query({ provider: 'claude', prompt: 'hi', extra: { runRoot, ...extra } }));
    expect(isAgentHarnessError(await ask({ model: 'replay' }), 'USAGE_ERROR')).toBe(true);
    expect(isAgentHarnessError(await ask({ model: 'replay', cassette: '/nowhere/c.json' }), 'CASSETTE_NOT_FOUND')).toBe(
      true,
    );
    const saved = process.env.ANTHROPIC_API_KEY;
    delete process.env.ANTHROPIC_API_KEY;
    try {
      const noKey = await ask({ model: 'auto', cassette: '/nowhere/c.json' });
      expect(isAgentHarnessError(noKey, 'CASSETTE_KEY_MISSING')).toBe(true);
      expect((noKey as Error).message).toContain('ANTHROPIC_API_KEY');
    } finally {
      if (saved !== undefined) process.env.ANTHROPIC_API_KEY = saved;
    }
    expect(fs.existsSync(runRoot)).toBe(false);
  });

  it("a query on another engine's provider is CONFIG_INVALID; a resume of an unknown session is RUN_NOT_FOUND", async () => {
    expect(
      isAgentHarnessError(
        await firstError(getProvider('codex').query({ provider: 'claude', prompt: 'x' })),
        'CONFIG_INVALID',
      ),
    ).toBe(true);
    const error = await firstError(
      getProvider('codex').query({
        provider: 'codex',
        prompt: 'x',
        resumeSessionId: 'no-such-session',
        extra: { runRoot: '/tmp/ah-no-runs-here' },
      }),
    );
    expect(isAgentHarnessError(error, 'RUN_NOT_FOUND')).toBe(true);
  });
});
