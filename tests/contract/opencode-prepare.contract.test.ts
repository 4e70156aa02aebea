/**
 * opencode's prepared environment by model mode: against the scripted model it reads an empty model catalog
 * (`OPENCODE_MODELS_PATH`, written into the run's own opencode cache) instead of building its built-in models.dev
 * snapshot on every start; live, it keeps its catalog and gets no catalog path.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { opencodeEngine } from '../../src/engines/opencode/index.js';
import { prepareInMode } from '../helpers/prepare-by-mode.js';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ah-opencode-prepare-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

describe('opencode prepare', () => {
  it('gives the scripted model an empty model catalog, and keeps the catalog live', async () => {
    const home = path.join(dir, 'scripted', 'home');
    const { env: scripted } = await prepareInMode(opencodeEngine, dir, 'scripted');
    expect(scripted).toMatchObject({
      OPENCODE_DISABLE_MODELS_FETCH: '1',
      AGENT_HARNESS_OPENCODE_BASE_URL: 'http://127.0.0.1:4321/v1',
    });
    const catalog = scripted.OPENCODE_MODELS_PATH;
    expect(catalog, 'OPENCODE_MODELS_PATH in the scripted env').toEqual(expect.any(String));
    // In the run's own home (writable to the agent, read by no other run), and empty.
    expect(path.relative(home, catalog!).startsWith('..')).toBe(false);
    expect(JSON.parse(fs.readFileSync(catalog!, 'utf8'))).toEqual({});
    const { env: live } = await prepareInMode(opencodeEngine, dir, 'live');
    expect(live.OPENCODE_MODELS_PATH).toBeUndefined();
  });
});
