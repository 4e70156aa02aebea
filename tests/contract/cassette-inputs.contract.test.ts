/**
 * The cassette as an input (issue 42): `--cassette` naming a FIFO used to block in open() for good, deaf to SIGTERM.
 * Now every cassette path is checked before it is opened, in each mode: a FIFO, a device or a directory is
 * INPUT_NOT_REGULAR_FILE at once; a recording refuses a symbolic link at its path (it would be replaced, not written
 * through); a cassette past AGENT_HARNESS_MAX_CASSETTE_BYTES is INPUT_TOO_LARGE and a bad value of it CONFIG_INVALID.
 * Each case runs the real `bin/agent-harness.js`, killed after a long timeout so that a regression fails instead of
 * hanging the suite; no timing is asserted.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CASSETTE_FORMAT } from '../../src/cassette/schema.js';
import { BIN, createCliSandbox, installFakeEngine, REPO, type CliRun, type CliSandbox } from '../helpers/cli.js';

/** Long enough for the CLI's startup on a loaded machine; a CLI stuck on its input is killed at this point. */
const HANG_TIMEOUT_MS = 60_000;
/** A key for the modes that record: the CLI checks it is set; nothing is ever sent with it (the input is refused). */
const KEY_ENV = { OPENAI_API_KEY: 'sk-test-cassette-inputs-0000' };

let sandbox: CliSandbox;
let fifo: string;
let dir: string;
let valid: string;

function run(args: string[], extraEnv: NodeJS.ProcessEnv = {}): CliRun {
  const result = spawnSync(process.execPath, [BIN, ...args], {
    cwd: sandbox.root,
    env: { ...sandbox.env, ...extraEnv },
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
    timeout: HANG_TIMEOUT_MS,
    killSignal: 'SIGKILL',
  });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

function expectCode(result: CliRun, code: string, status = 1): void {
  expect(result.status, result.stderr).toBe(status);
  expect(result.stderr).toContain(`error ${code}:`);
  expect(result.stderr).not.toMatch(/^\s+at /m);
}

const start = (mode: string, cassette: string, ...more: string[]): string[] => [
  'start',
  '--model',
  mode,
  '--cassette',
  cassette,
  ...more,
  '--prompt',
  'hi',
  'codex',
];

beforeAll(() => {
  sandbox = createCliSandbox();
  installFakeEngine(sandbox, 'codex', {
    stdoutFile: path.join(REPO, 'fixtures', 'streams', 'codex', 'turn1.stdout.jsonl'),
  });
  fifo = path.join(sandbox.root, 'cassette.fifo');
  execFileSync('mkfifo', [fifo]);
  dir = path.join(sandbox.root, 'cassette-dir');
  fs.mkdirSync(dir);
  valid = path.join(sandbox.root, 'valid.cassette.json');
  fs.writeFileSync(
    valid,
    JSON.stringify({
      format: CASSETTE_FORMAT,
      created_at: new Date(0).toISOString(),
      engine: 'codex',
      upstream: null,
      redactions: [],
      interactions: [],
    }),
  );
});
afterAll(() => sandbox.cleanup());

describe('--cassette that is not a regular file', () => {
  it('a FIFO is refused with INPUT_NOT_REGULAR_FILE in replay, auto and record mode, never waited on', () => {
    for (const mode of ['replay', 'auto', 'record']) {
      const result = run(start(mode, fifo), KEY_ENV);
      expectCode(result, 'INPUT_NOT_REGULAR_FILE');
      expect(result.stderr).toContain('FIFO');
    }
  });

  it('a FIFO given to `model serve --cassette` is refused the same way', () => {
    expectCode(run(['model', 'serve', '--cassette', fifo]), 'INPUT_NOT_REGULAR_FILE');
  });

  it('a FIFO as a live fork output (--fork-cassette) is refused before anything is forwarded', () => {
    const result = run(
      ['start', '--model', 'replay', '--cassette', valid, '--fork-at', '0', '--fork-to', 'live'].concat([
        '--fork-cassette',
        fifo,
        '--prompt',
        'hi',
        'codex',
      ]),
      KEY_ENV,
    );
    expectCode(result, 'INPUT_NOT_REGULAR_FILE');
  });

  it('a device (/dev/null) is refused in replay and record mode', () => {
    expectCode(run(start('replay', '/dev/null')), 'INPUT_NOT_REGULAR_FILE');
    expectCode(run(start('record', '/dev/null'), KEY_ENV), 'INPUT_NOT_REGULAR_FILE');
  });

  it('a directory is refused in replay, auto and record mode', () => {
    for (const mode of ['replay', 'auto', 'record'])
      expectCode(run(start(mode, dir), KEY_ENV), 'INPUT_NOT_REGULAR_FILE');
  });

  it('a recording refuses a symbolic link at the cassette path and leaves its target untouched', () => {
    const target = path.join(sandbox.root, 'link-target.txt');
    fs.writeFileSync(target, 'not a cassette\n');
    const link = path.join(sandbox.root, 'linked.cassette.json');
    fs.symlinkSync(target, link);
    expectCode(run(start('record', link), KEY_ENV), 'INPUT_NOT_REGULAR_FILE');
    expect(fs.lstatSync(link).isSymbolicLink()).toBe(true);
    expect(fs.readFileSync(target, 'utf8')).toBe('not a cassette\n');
  });
});

describe('cassette size limit', () => {
  it('a cassette past AGENT_HARNESS_MAX_CASSETTE_BYTES is INPUT_TOO_LARGE, naming the variable', () => {
    const result = run(start('replay', valid), { AGENT_HARNESS_MAX_CASSETTE_BYTES: '32' });
    expectCode(result, 'INPUT_TOO_LARGE');
    expect(result.stderr).toContain('AGENT_HARNESS_MAX_CASSETTE_BYTES');
    expectCode(
      run(['model', 'serve', '--cassette', valid], { AGENT_HARNESS_MAX_CASSETTE_BYTES: '32' }),
      'INPUT_TOO_LARGE',
    );
  });

  it('a bad AGENT_HARNESS_MAX_CASSETTE_BYTES is CONFIG_INVALID naming it', () => {
    const result = run(start('replay', valid), { AGENT_HARNESS_MAX_CASSETTE_BYTES: 'lots' });
    expectCode(result, 'CONFIG_INVALID', 2);
    expect(result.stderr).toContain('AGENT_HARNESS_MAX_CASSETTE_BYTES');
  });

  it('a missing cassette is still CASSETTE_NOT_FOUND in replay', () => {
    expectCode(run(start('replay', path.join(sandbox.root, 'absent.json'))), 'CASSETTE_NOT_FOUND');
  });
});
