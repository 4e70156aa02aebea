/**
 * The command's import graph stays lazy (issue 13): `--version`, `runs` and `translate` load neither the model
 * server, nor the PTY module, nor the attempt code, nor any engine's adapter (translate loads one engine's parser).
 * Checked from the sources (every module is its own file there), with a module hook logging what the process loads.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'ah-imports-'));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

/** The src/ and dependency modules `agent-harness ...args` loaded, as paths relative to the repository. */
function loadedBy(args: string[]): string[] {
  const log = path.join(tmp, `imports-${args[0]}-${Math.random().toString(16).slice(2)}.log`);
  const result = spawnSync(process.execPath, ['--import', path.resolve('tests/helpers/import-log/register.mjs'), 'bin/agent-harness.js', ...args], {
    env: { ...process.env, AGENT_HARNESS_FROM_SOURCE: '1', AH_IMPORT_LOG: log, AGENT_HARNESS_RUN_ROOT: path.join(tmp, 'runs') },
    encoding: 'utf8',
  });
  expect(result.status, result.stderr).toBe(0);
  const root = path.resolve('.');
  return fs.readFileSync(log, 'utf8').split('\n').filter(Boolean).map((url) => path.relative(root, new URL(url).pathname));
}

const HEAVY = [
  /^src\/model\//,
  /node-pty/,
  /^src\/runtime\/pty\.ts$/,
  /^src\/core\/run-attempt\.ts$/,
  /^src\/engines\/[a-z]+\/index\.ts$/,
];

describe('what a light command loads', () => {
  it.each([['--version'], ['-V']])('%s alone is answered from package.json, loading nothing of the command', (flag) => {
    const log = path.join(tmp, `imports-version-${Math.random().toString(16).slice(2)}.log`);
    const result = spawnSync(process.execPath, ['--import', path.resolve('tests/helpers/import-log/register.mjs'), 'bin/agent-harness.js', flag], {
      env: { ...process.env, AH_IMPORT_LOG: log },
      encoding: 'utf8',
    });
    expect(result.status, result.stderr).toBe(0);
    const version = (JSON.parse(fs.readFileSync('package.json', 'utf8')) as { version: string }).version;
    expect(result.stdout).toBe(`${version}\n`);
    const loaded = fs.existsSync(log) ? fs.readFileSync(log, 'utf8').split('\n').filter(Boolean) : [];
    expect(loaded.filter((url) => /\/(src|dist)\//.test(url))).toEqual([]);
  });

  it.each([
    ['--version with another option', ['--version', '--help']],
    ['runs --json', ['runs', '--json']],
    ['translate --summary', ['translate', '--engine', 'codex', '--stdout', 'fixtures/streams/codex/done-marker.stdout.jsonl', '--summary']],
  ])('%s loads no model server, PTY, attempt code or engine adapter', (_label, args) => {
    const loaded = loadedBy(args);
    expect(loaded).toContain('src/cli/main.ts');
    expect(loaded.filter((file) => HEAVY.some((pattern) => pattern.test(file)))).toEqual([]);
  });

  it('translate loads the parser of its engine only', () => {
    const parsers = loadedBy(['translate', '--engine', 'codex', '--stdout', 'fixtures/streams/codex/done-marker.stdout.jsonl', '--summary'])
      .filter((file) => /^src\/engines\/[a-z]+\//.test(file));
    expect(parsers.every((file) => file.startsWith('src/engines/codex/'))).toBe(true);
    expect(parsers).toContain('src/engines/codex/parse.ts');
  });
});
