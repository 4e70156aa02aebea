/**
 * gemini's prepared environment by model mode: against the scripted model it runs as one Node process
 * (`GEMINI_CLI_NO_RELAUNCH`, not a launcher that spawns the real CLI with a larger heap) with the scripted key and
 * base URL; live, it keeps its own relaunch and gets neither.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { geminiEngine } from '../../src/engines/gemini/index.js';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ah-gemini-prepare-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

async function preparedEnv(modelMode: 'scripted' | 'live', name: string): Promise<Record<string, string>> {
  const prepared = await geminiEngine.prepare({
    runDir: path.join(dir, name, 'run'),
    agentHome: path.join(dir, name, 'home'),
    modelMode,
    modelBaseUrl: modelMode === 'live' ? null : 'http://127.0.0.1:4321',
    profile: 'agent-harness',
    interactive: false,
  });
  try {
    return prepared.env;
  } finally {
    await prepared.cleanup();
  }
}

describe('gemini prepare', () => {
  it('runs one process against the scripted model, and keeps its relaunch live', async () => {
    expect(await preparedEnv('scripted', 'scripted')).toMatchObject({
      GEMINI_CLI_NO_RELAUNCH: 'true',
      GOOGLE_GEMINI_BASE_URL: 'http://127.0.0.1:4321',
      GEMINI_TELEMETRY_ENABLED: 'false',
    });
    const live = await preparedEnv('live', 'live');
    expect(live.GEMINI_CLI_NO_RELAUNCH).toBeUndefined();
    expect(live.GOOGLE_GEMINI_BASE_URL).toBeUndefined();
  });
});
