/**
 * Every numeric setting is read by one helper (src/runtime/integer-setting.ts): set but not a whole number in
 * range is CONFIG_INVALID naming the setting and the value, never silently the default. Covered here: the helper,
 * the two numeric environment variables through the real CLI, and an attempt's `timeoutMs`.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runAttempt } from '../../src/core/run-attempt.js';
import { isAgentHarnessError } from '../../src/errors/index.js';
import { maxScriptBytes } from '../../src/model/script.js';
import { resolveHarnessPaths } from '../../src/runtime/paths.js';
import { readIntegerSetting } from '../../src/runtime/integer-setting.js';
import { createCliSandbox, installFakeEngine, REPO, runCliProcess, type CliSandbox } from '../helpers/cli.js';

describe('readIntegerSetting', () => {
  const read = (value: string | number | undefined, min = 0, max?: number) =>
    readIntegerSetting({ name: 'X_SETTING', value, fallback: 7, min, ...(max !== undefined ? { max } : {}) });

  it('gives the fallback when unset or blank, the number when whole and in range', () => {
    expect(read(undefined)).toBe(7);
    expect(read('  ')).toBe(7);
    expect(read(' 42 ')).toBe(42);
    expect(read('0')).toBe(0);
    expect(read(5)).toBe(5);
  });

  it('is CONFIG_INVALID, naming the setting and the value, for anything else', () => {
    for (const bad of ['abc', '1e6', '4MiB', '-1', '1.5', '0x10', '99999999999999999999', Number.NaN, -3, 2.5]) {
      let error: unknown;
      try {
        read(bad);
      } catch (caught) {
        error = caught;
      }
      expect(isAgentHarnessError(error, 'CONFIG_INVALID'), `value ${String(bad)}`).toBe(true);
      expect((error as Error).message).toContain('X_SETTING');
      expect((error as Error).message).toContain(JSON.stringify(bad));
    }
    expect(() => read(11, 0, 10)).toThrow(expect.objectContaining({ code: 'CONFIG_INVALID' }));
    expect(() => read(0, 1)).toThrow(expect.objectContaining({ code: 'CONFIG_INVALID' }));
  });
});

describe('AGENT_HARNESS_MAX_SCRIPT_BYTES', () => {
  it('is read through the helper: unset is 16 MiB, a byte count is taken, 0 or text is CONFIG_INVALID', () => {
    expect(maxScriptBytes({})).toBe(16 * 1024 * 1024);
    expect(maxScriptBytes({ AGENT_HARNESS_MAX_SCRIPT_BYTES: '1024' })).toBe(1024);
    for (const bad of ['abc', '0', '-5'])
      expect(() => maxScriptBytes({ AGENT_HARNESS_MAX_SCRIPT_BYTES: bad })).toThrow(
        expect.objectContaining({ code: 'CONFIG_INVALID' }),
      );
  });
});

describe('numeric environment variables through the CLI', () => {
  let sandbox: CliSandbox;
  let script: string;
  beforeAll(() => {
    sandbox = createCliSandbox();
    installFakeEngine(sandbox, 'codex', {
      stdoutFile: path.join(REPO, 'fixtures', 'streams', 'codex', 'done-marker.stdout.jsonl'),
    });
    script = path.join(sandbox.root, 'script.json');
    fs.writeFileSync(script, JSON.stringify({ version: 1, turns: [{ type: 'text', text: 'hi' }] }));
  });
  afterAll(() => sandbox.cleanup());

  it.each([
    ['AGENT_HARNESS_MAX_SCRIPT_BYTES', ['start', '--script', '<script>', '--prompt', 'hi', 'codex']],
    ['AGENT_HARNESS_MAX_SCRIPT_BYTES', ['model', 'serve', '--script', '<script>']],
    ['AGENT_HARNESS_EVENT_MEMORY_BYTES', ['start', '--prompt', 'hi', 'codex']],
  ])('%s=abc is CONFIG_INVALID for %j, naming the variable', (name, args) => {
    const run = runCliProcess(
      sandbox,
      args.map((arg) => (arg === '<script>' ? script : arg)),
      { [name]: 'abc' },
    );
    expect(run.status).not.toBe(0);
    expect(run.stderr).toContain('CONFIG_INVALID');
    expect(run.stderr).toContain(name);
    expect(run.stderr).toContain('"abc"');
  });
});

describe("an attempt's timeoutMs", () => {
  it('is CONFIG_INVALID before anything is written when it is not a whole number of ms in range', async () => {
    const sandbox = createCliSandbox();
    try {
      const paths = resolveHarnessPaths({ cwd: sandbox.root, env: sandbox.env });
      for (const timeoutMs of [0, -1, 1.5, Number.NaN, 2 ** 31]) {
        const error = await runAttempt({
          engine: 'codex',
          launch: 'start',
          paths,
          hostEnv: sandbox.env,
          prompt: 'hi',
          isolation: 'off',
          timeoutMs,
        }).catch((e: unknown) => e);
        expect(isAgentHarnessError(error, 'CONFIG_INVALID'), `timeoutMs ${timeoutMs}: ${String(error)}`).toBe(true);
        expect((error as Error).message).toContain('timeoutMs');
      }
      expect(fs.existsSync(paths.runRoot)).toBe(false);
    } finally {
      sandbox.cleanup();
    }
  });
});
