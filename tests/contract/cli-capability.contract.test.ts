/**
 * A cassette mode that cannot run is refused from the CLI before the engine starts: no cassette named (USAGE_ERROR,
 * exit 2), a replay of a missing cassette (CASSETTE_NOT_FOUND), a recording without the vendor's key
 * (CASSETTE_KEY_MISSING), `auto` with neither (exit 1). The engine is never started.
 */
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createCliSandbox,
  fakeEngineCalls,
  installFakeEngine,
  REPO,
  runCliProcess,
  type CliSandbox,
} from '../helpers/cli.js';

let sandbox: CliSandbox;

beforeAll(() => {
  sandbox = createCliSandbox();
  installFakeEngine(sandbox, 'codex', {
    stdoutFile: path.join(REPO, 'fixtures', 'streams', 'codex', 'done-marker.stdout.jsonl'),
  });
});
afterAll(() => sandbox.cleanup());

describe('cassette modes refused from the CLI', () => {
  it.each([
    ['replay without --cassette', 'USAGE_ERROR', 2, ['start', '--model', 'replay', '--prompt', 'x', 'codex']],
    ['record without --cassette', 'USAGE_ERROR', 2, ['--model', 'record', 'codex', 'exec', 'x']],
    [
      'replay of a missing cassette',
      'CASSETTE_NOT_FOUND',
      1,
      ['start', '--model', 'replay', '--cassette', 'nowhere.json', '--prompt', 'x', 'codex'],
    ],
    [
      'record without a key',
      'CASSETTE_KEY_MISSING',
      1,
      ['--model', 'record', '--cassette', 'c.json', 'codex', 'exec', 'x'],
    ],
    ['auto with neither', 'CASSETTE_KEY_MISSING', 1, ['--model', 'auto', '--cassette', 'c.json', 'codex', 'exec', 'x']],
  ] as const)('%s: %s, exit %i, engine not started', (_label, code, status, args) => {
    const run = runCliProcess(sandbox, [...args]);
    expect(run.status).toBe(status);
    expect(run.stderr).toContain(`agent-harness: error ${code}: `);
    expect(run.stderr).toMatch(/\n {2}hint: \S/);
    expect(fakeEngineCalls(sandbox)).toEqual([]);
  });

  it('a model mode the protocol does not know is still a usage error', () => {
    const run = runCliProcess(sandbox, ['start', '--model', 'cassette', '--prompt', 'x', 'codex']);
    expect(run.status).toBe(2);
    expect(run.stderr).toContain('agent-harness: error USAGE_ERROR: ');
  });
});
