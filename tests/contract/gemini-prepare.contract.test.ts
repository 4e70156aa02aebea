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
import { prepareInMode } from '../helpers/prepare-by-mode.js';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ah-gemini-prepare-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

describe('gemini prepare', () => {
  it('runs one process against the scripted model, and keeps its relaunch live', async () => {
    expect((await prepareInMode(geminiEngine, dir, 'scripted')).env).toMatchObject({
      GEMINI_CLI_NO_RELAUNCH: 'true',
      GOOGLE_GEMINI_BASE_URL: 'http://127.0.0.1:4321',
      GEMINI_TELEMETRY_ENABLED: 'false',
    });
    const { env: live } = await prepareInMode(geminiEngine, dir, 'live');
    expect(live.GEMINI_CLI_NO_RELAUNCH).toBeUndefined();
    expect(live.GOOGLE_GEMINI_BASE_URL).toBeUndefined();
  });
});
