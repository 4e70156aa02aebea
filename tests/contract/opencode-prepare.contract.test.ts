/**
 * opencode's prepared environment by model mode: against the scripted model it reads an empty model catalog
 * (`OPENCODE_MODELS_PATH`, written into the run's own opencode cache) instead of building its built-in models.dev
 * snapshot on every start; live, it keeps its catalog and gets no catalog path. A scripted run also keeps its Bun
 * runtime at the baseline JIT (`BUN_JSC_useDFGJIT=0`: a few-second run pays the optimizing compilers without gain).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { opencodeEngine, opencodeScriptedModelsPath } from '../../src/engines/opencode/index.js';
import { isAgentHarnessError } from '../../src/errors/index.js';
import { confineToAgentRoots } from '../../src/runtime/agent-writable.js';
import { rejectionOf } from '../helpers/errors.js';
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

  it('stops the scripted run at the baseline JIT, and keeps every JIT tier live', async () => {
    const { env: scripted } = await prepareInMode(opencodeEngine, dir, 'scripted', 'jit-scripted');
    expect(scripted.BUN_JSC_useDFGJIT).toBe('0');
    const { env: live } = await prepareInMode(opencodeEngine, dir, 'live', 'jit-live');
    expect(live.BUN_JSC_useDFGJIT).toBeUndefined();
  });

  it('never writes the catalog through a link an agent planted in the run home (the file, or a directory on its way)', async () => {
    const host = fs.mkdtempSync(path.join(dir, 'host-'));
    const hostFile = path.join(host, 'secret.json');
    fs.writeFileSync(hostFile, '{ "secret": "host-token" }\n');
    for (const [name, plant] of [
      ['file-link', (home: string) => fs.symlinkSync(hostFile, opencodeScriptedModelsPath(home))],
      ['dir-link', (home: string) => fs.symlinkSync(host, path.join(home, '.cache', 'opencode'))],
    ] as const) {
      const home = path.join(dir, name, 'home');
      fs.mkdirSync(path.join(home, '.cache', 'opencode'), { recursive: true });
      if (name === 'dir-link') fs.rmdirSync(path.join(home, '.cache', 'opencode'));
      plant(home);
      const refused = await rejectionOf(
        confineToAgentRoots([home, path.join(dir, name, 'run')], () =>
          prepareInMode(opencodeEngine, dir, 'scripted', name),
        ),
      );
      expect(isAgentHarnessError(refused, 'ENGINE_CONFIG_INJECTION_FAILED'), `${name}: ${String(refused)}`).toBe(true);
      expect(fs.readFileSync(hostFile, 'utf8')).toBe('{ "secret": "host-token" }\n');
      expect(fs.readdirSync(host)).toEqual(['secret.json']);
    }
  });
});
