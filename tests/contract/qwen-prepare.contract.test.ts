/**
 * qwen's run settings by model mode: against the scripted model, no memory extraction runs after a turn (qwen's
 * managed auto-memory would send the scripted model a second request that takes the script's next turn); live, the
 * memory settings are the user's and not written.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { qwenEngine } from '../../src/engines/qwen/index.js';
import { prepareInMode } from '../helpers/prepare-by-mode.js';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ah-qwen-prepare-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

/** The run's `.qwen/settings.json` as prepared for `modelMode`. */
async function preparedSettings(modelMode: 'scripted' | 'live'): Promise<Record<string, unknown>> {
  const { runDir } = await prepareInMode(qwenEngine, dir, modelMode);
  return JSON.parse(fs.readFileSync(path.join(runDir, '.qwen', 'settings.json'), 'utf8'));
}

describe('qwen prepare', () => {
  it('turns managed auto-memory off against the scripted model, and leaves it to the user live', async () => {
    expect(await preparedSettings('scripted')).toMatchObject({
      security: { auth: { selectedType: 'openai' } },
      memory: { enableManagedAutoMemory: false, enableManagedAutoDream: false },
    });
    const live = await preparedSettings('live');
    expect(live).toMatchObject({ telemetry: { enabled: false } });
    expect(live.memory).toBeUndefined();
  });
});
