/**
 * This repository's `npm test` runs the engine tests on codex and claude unless `AGENT_HARNESS_ENGINES` says
 * otherwise (tests/setup/test-engines.ts says why), and CI runs every engine: `.ci/run` runs the README's test command
 * with `AGENT_HARNESS_ENGINES=all`, which the plugin and the tests' engine list read as no narrowing.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { enabledEngines } from '../../src/vitest/options.js';
import { REPO } from '../helpers/cli.js';
import { applyDefaultTestEngines, DEFAULT_TEST_ENGINES, testEnginesLine } from '../setup/test-engines.js';

describe('the engines of npm test', () => {
  it('unset or blank: codex and claude, and the line that says so names the way to run every engine', () => {
    for (const env of [{}, { AGENT_HARNESS_ENGINES: ' ' }] as NodeJS.ProcessEnv[]) {
      applyDefaultTestEngines(env);
      const line = testEnginesLine(env);
      expect(env.AGENT_HARNESS_ENGINES).toBe(DEFAULT_TEST_ENGINES);
      expect(enabledEngines(undefined, env)).toEqual(['codex', 'claude']);
      expect(line).toBe(
        'agent-harness tests: engine tests on codex,claude (AGENT_HARNESS_ENGINES=all runs every engine, as CI does)',
      );
    }
  });

  it('set: left as it is (`all` narrows nothing; a list narrows to it)', () => {
    const all: NodeJS.ProcessEnv = { AGENT_HARNESS_ENGINES: 'all' };
    applyDefaultTestEngines(all);
    expect(testEnginesLine(all)).toBe('agent-harness tests: engine tests on every engine (AGENT_HARNESS_ENGINES=all)');
    expect(all.AGENT_HARNESS_ENGINES).toBe('all');
    expect(enabledEngines(undefined, all)).toBeNull();
    const one: NodeJS.ProcessEnv = { AGENT_HARNESS_ENGINES: 'gemini' };
    applyDefaultTestEngines(one);
    expect(enabledEngines(undefined, one)).toEqual(['gemini']);
  });

  it("CI runs the README's test command on every engine", () => {
    const readme = fs.readFileSync(path.join(REPO, 'README.md'), 'utf8');
    const quickStart = /```sh\n([^`]*)```/.exec(readme.slice(readme.indexOf('## Quick start')))?.[1] ?? '';
    const testCommand = quickStart.trim().split('\n').at(-1);
    expect(testCommand).toBe('npm test');
    const ci = fs.readFileSync(path.join(REPO, '.ci', 'run'), 'utf8').split('\n');
    expect(ci).toContain(`AGENT_HARNESS_ENGINES=all ${testCommand} </dev/null`);
  });
});
