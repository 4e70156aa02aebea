/**
 * The direct form is the engine's own command line (seed 001, Decision 5): after `<engine>` every argument is
 * the engine's, harness options go before the engine name, and `--translate N` is recognised anywhere.
 * Runs the real CLI as a subprocess with fake engine executables that log their argv.
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

const CODEX_STREAM = path.join(REPO, 'fixtures', 'streams', 'codex', 'done-marker.stdout.jsonl');
let sandbox: CliSandbox;

beforeAll(() => {
  sandbox = createCliSandbox();
  for (const engine of ['codex', 'claude', 'gemini']) installFakeEngine(sandbox, engine, { stdoutFile: CODEX_STREAM });
});
afterAll(() => sandbox.cleanup());

/** The engine argv of the last fake call, from the first of `head` on (the adapter may prepend its own flags). */
function lastEngineArgv(head: string): string[] {
  const call = fakeEngineCalls(sandbox).at(-1);
  expect(call, 'the fake engine was called').toBeDefined();
  const argv = call!.argv;
  expect(argv).toContain(head);
  return argv.slice(argv.indexOf(head));
}

describe('agent-harness <engine> …: the engine gets exactly its arguments', () => {
  it('claude --model sonnet -p hi reaches claude unchanged (the harness --model is not consulted)', () => {
    const run = runCliProcess(sandbox, ['claude', '--model', 'sonnet', '-p', 'hi']);
    expect(run.stderr).not.toContain('USAGE_ERROR');
    expect(lastEngineArgv('--model')).toEqual(['--model', 'sonnet', '-p', 'hi']);
  });

  it('gemini --prompt hi is not rewritten into a harness prompt', () => {
    const run = runCliProcess(sandbox, ['gemini', '--prompt', 'hi']);
    expect(run.stderr).not.toContain('USAGE_ERROR');
    expect(lastEngineArgv('--prompt')).toEqual(['--prompt', 'hi']);
  });

  it("--help and --timeout-ms after the engine name are the engine's", () => {
    runCliProcess(sandbox, ['codex', 'exec', '--timeout-ms', 'x', '--help']);
    expect(lastEngineArgv('exec')).toEqual(['exec', '--timeout-ms', 'x', '--help']);
  });

  it('--translate 2 works before the engine name and after it, and never reaches the engine', () => {
    for (const args of [
      ['--translate', '2', 'codex', 'exec', '--json', 'a'],
      ['codex', 'exec', '--json', 'a', '--translate', '2'],
    ]) {
      const run = runCliProcess(sandbox, args);
      expect(run.status, run.stderr).toBe(0);
      expect(lastEngineArgv('exec')).toEqual(['exec', '--json', 'a']);
      const first = JSON.parse(run.stdout.split('\n')[0]!) as { type?: string };
      expect(typeof first.type, 'stdout is the FCMP view').toBe('string');
    }
  });

  it('harness options before the engine name apply to the direct form', () => {
    const run = runCliProcess(sandbox, ['--prompt', 'from the harness', 'codex']);
    expect(run.status, run.stderr).toBe(0);
    expect(fakeEngineCalls(sandbox).at(-1)!.argv).toContain('from the harness');
  });
});

describe('errors are printed once', () => {
  it('an unknown harness option prints one error line with code and hint', () => {
    const run = runCliProcess(sandbox, ['runs', '--bogus']);
    expect(run.status).toBe(2);
    expect(run.stderr.match(/unknown option/g)?.length).toBe(1);
    expect(run.stderr).toContain('agent-harness: error USAGE_ERROR: ');
    expect(run.stderr.match(/hint: /g)?.length).toBe(1);
  });
});
