/**
 * Capability gating is reachable from the CLI (seed 001, Decision 8): a feature the harness knows but cannot
 * run yet fails with ENGINE_CAPABILITY_UNAVAILABLE (exit 1), not USAGE_ERROR, and the engine is never started.
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

describe('ENGINE_CAPABILITY_UNAVAILABLE from the CLI', () => {
  it.each([
    ['start', ['start', '--model', 'replay', '--prompt', 'x', 'codex']],
    ['the direct form', ['--model', 'record', 'codex', 'exec', 'x']],
  ])('--model replay/record on %s is capability-gated, exit 1, engine not started', (_label, args) => {
    const run = runCliProcess(sandbox, args);
    expect(run.status).toBe(1);
    expect(run.stderr).toContain('agent-harness: error ENGINE_CAPABILITY_UNAVAILABLE: ');
    expect(run.stderr).toMatch(/capability "model:(replay|record)"/);
    expect(run.stderr).toMatch(/\n {2}hint: \S/);
    expect(fakeEngineCalls(sandbox)).toEqual([]);
  });

  it('a model mode the protocol does not know is still a usage error', () => {
    const run = runCliProcess(sandbox, ['start', '--model', 'cassette', '--prompt', 'x', 'codex']);
    expect(run.status).toBe(2);
    expect(run.stderr).toContain('agent-harness: error USAGE_ERROR: ');
  });
});
