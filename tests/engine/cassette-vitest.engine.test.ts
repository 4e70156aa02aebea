/**
 * A Vitest project in `auto` model mode (a nested Vitest run on a project made in a temporary directory): its first run
 * records the test's cassette beside the test file (`__cassettes__/<file>/<test>.json`) against a keyed local vendor;
 * the second, with the vendor stopped and no key, replays it; `-u` re-records it against a new vendor; with neither a
 * cassette nor a key the test fails with CASSETTE_KEY_MISSING, never reaching the network.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { turns } from '../../src/model/index.js';
import { VITEST, childVitestEnv } from '../helpers/child-vitest.js';
import { REPO } from '../helpers/cli.js';
import { engineMissingReason } from '../helpers/engines.js';
import { startKeyedVendor } from '../helpers/keyed-vendor.js';
import { scaled } from '../helpers/load-scaled.js';

const KEY = 'sk-test-SECRET-vitest-auto-0a1b2c3d';
const missing = await engineMissingReason('codex');
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'ah-cassette-vitest-'));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

/** A project using the plugin in `auto` mode, its upstream and run root from the environment. */
function makeProject(): string {
  const project = path.join(tmp, 'project');
  fs.mkdirSync(path.join(project, 'tests'), { recursive: true });
  fs.symlinkSync(path.join(REPO, 'node_modules'), path.join(project, 'node_modules'));
  fs.writeFileSync(path.join(project, 'package.json'), '{"name":"cassette-project","private":true,"type":"module"}\n');
  fs.writeFileSync(
    path.join(project, 'vitest.config.ts'),
    `import { defineConfig } from 'vitest/config';
import { agentHarness } from ${JSON.stringify(path.join(REPO, 'src', 'public', 'vitest.js'))};
export default defineConfig({
  plugins: [agentHarness({ model: 'auto', runRoot: process.env.AH_RUN_ROOT, timeoutMs: ${scaled(120_000)}, reportDir: 'reports',
    ...(process.env.AH_UPSTREAM ? { upstream: process.env.AH_UPSTREAM } : {}) })],
  test: { include: ['tests/**/*.test.ts'], testTimeout: ${scaled(180_000)} },
});
`,
  );
  fs.writeFileSync(
    path.join(project, 'tests', 'auto.test.ts'),
    `import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'vitest';
import { test } from ${JSON.stringify(path.join(REPO, 'src', 'public', 'vitest.js'))};
test('codex writes a.txt', async ({ agent }) => {
  const run = await agent.start('codex', { prompt: 'Write a.txt' });
  fs.appendFileSync(process.env.AH_RUNS_LOG!, run.runDir + '\\n');
  expect(run.error).toBeNull();
  expect(run).toHaveCompleted();
  expect(fs.readFileSync(path.join(run.runDir, 'a.txt'), 'utf8')).toBe(process.env.AH_EXPECTED);
});
`,
  );
  return project;
}

/** Runs the project's tests in a child Vitest (asynchronously: the vendor answers from this process). */
function runVitest(project: string, args: string[], extra: Record<string, string>) {
  // No vendor key of this machine: the recording goes to the test's vendor.
  const env = Object.fromEntries(Object.entries(childVitestEnv()).filter(([key]) => !/_API_KEY$/.test(key)));
  return new Promise<{ status: number | null; output: string }>((resolve) => {
    const child = spawn(process.execPath, [VITEST, 'run', '--root', project, ...args], {
      cwd: project,
      env: { ...env, AH_RUN_ROOT: path.join(tmp, 'runs'), ...extra },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      output += chunk;
    });
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      output += chunk;
    });
    child.on('close', (status) => resolve({ status, output }));
  });
}

/** The model mode of the last run the project's test logged. */
function lastMode(log: string): string {
  const runDir = fs.readFileSync(log, 'utf8').trim().split('\n').at(-1)!;
  return JSON.parse(fs.readFileSync(path.join(runDir, '.audit', 'meta.1.json'), 'utf8')).model.mode;
}

describe('Vitest auto mode', () => {
  it.skipIf(missing)(
    'records on the first run, replays on the second, re-records with -u',
    { timeout: scaled(600_000) },
    async () => {
      const project = makeProject();
      const log = path.join(tmp, 'runs.log');
      const cassette = path.join(project, 'tests', '__cassettes__', 'auto.test.ts', 'codex-writes-a.txt.json');
      const first = await startKeyedVendor(KEY, {
        version: 1,
        turns: [turns.writeFile('a.txt', 'first vendor\n'), turns.final('Wrote a.txt.')],
      });
      try {
        const recorded = await runVitest(project, [], {
          AH_UPSTREAM: first.url,
          OPENAI_API_KEY: KEY,
          AH_RUNS_LOG: log,
          AH_EXPECTED: 'first vendor\n',
        });
        expect(recorded.output).toContain('1 passed');
        expect(recorded.status).toBe(0);
        expect(first.accepted).toBeGreaterThanOrEqual(2);
      } finally {
        await first.close();
      }
      expect(lastMode(log)).toBe('record');
      expect(fs.readFileSync(cassette, 'utf8')).not.toContain(KEY);

      // No vendor, no key: the cassette is replayed.
      const replayed = await runVitest(project, [], { AH_RUNS_LOG: log, AH_EXPECTED: 'first vendor\n' });
      expect(replayed.output).toContain('1 passed');
      expect(lastMode(log)).toBe('replay');

      // -u re-records, against a vendor that now answers otherwise.
      const second = await startKeyedVendor(KEY, {
        version: 1,
        turns: [turns.writeFile('a.txt', 'second vendor\n'), turns.final('Wrote a.txt again.')],
      });
      try {
        const updated = await runVitest(project, ['-u'], {
          AH_UPSTREAM: second.url,
          OPENAI_API_KEY: KEY,
          AH_RUNS_LOG: log,
          AH_EXPECTED: 'second vendor\n',
        });
        expect(updated.output).toContain('1 passed');
        expect(second.accepted).toBeGreaterThanOrEqual(2);
      } finally {
        await second.close();
      }
      expect(lastMode(log)).toBe('record');
      expect(fs.readFileSync(cassette, 'utf8')).toContain('second vendor');

      // Neither a cassette nor a key: a clear failure, no network.
      fs.rmSync(cassette);
      const refused = await runVitest(project, [], { AH_RUNS_LOG: log, AH_EXPECTED: 'x' });
      expect(refused.status).not.toBe(0);
      expect(refused.output).toContain('CASSETTE_KEY_MISSING');
    },
  );
});
