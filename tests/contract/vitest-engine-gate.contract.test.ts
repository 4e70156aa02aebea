/**
 * `agent.start(engine)` in a Vitest test: an id no engine is registered under (`codx`, a typo) fails the test with
 * ENGINE_UNKNOWN, as the CLI does, instead of skipping it (green in CI); only a known engine the project did not
 * enable skips, and the skip says so. A child Vitest runs fixtures/vitest-engine-gate-project (only codex enabled);
 * no engine starts.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { VITEST, childVitestEnv } from '../helpers/child-vitest.js';
import { REPO } from '../helpers/cli.js';

const PROJECT = path.join('fixtures', 'vitest-engine-gate-project');
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'ah-engine-gate-'));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

interface JsonReport {
  testResults: Array<{
    assertionResults: Array<{ title: string; status: string; failureMessages: string[] }>;
  }>;
}

// The skip names what left the engine out: the project's `engines` (under AGENT_HARNESS_ENGINES=all, which narrows
// nothing, as when it is unset), or the variable when it names other engines.
const CASES: Array<{ variable: string; leftOutBy: RegExp }> = [
  { variable: 'all', leftOutBy: /engine claude is known but not enabled in this project/ },
  {
    variable: 'codex',
    leftOutBy: /engine claude is known but not enabled in this run: AGENT_HARNESS_ENGINES=codex leaves it out/,
  },
];

describe.for(CASES)(
  'agent.start with an engine the project cannot run (AGENT_HARNESS_ENGINES=$variable)',
  ({ variable, leftOutBy }) => {
    it('an unknown engine fails the test with ENGINE_UNKNOWN; a known engine not enabled skips, saying so', async () => {
      const report = path.join(tmp, `report-${variable}.json`);
      const child = spawn(
        process.execPath,
        [VITEST, 'run', '--root', PROJECT, '--reporter=json', `--outputFile=${report}`, '--reporter=verbose'],
        {
          cwd: REPO,
          env: childVitestEnv({
            AH_FIXTURE_REPORT_DIR: path.join(tmp, 'reports'),
            AH_FIXTURE_RUN_ROOT: path.join(tmp, 'runs'),
            AGENT_HARNESS_ENGINES: variable,
          }),
          stdio: ['ignore', 'pipe', 'pipe'],
        },
      );
      let output = '';
      child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
      child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
      const status = await new Promise<number | null>((resolve) => child.on('close', resolve));
      expect(status, output).toBe(1);
      const results = (JSON.parse(fs.readFileSync(report, 'utf8')) as JsonReport).testResults.flatMap(
        (file) => file.assertionResults,
      );
      const byTitle = Object.fromEntries(results.map((r) => [r.title, r]));
      expect(byTitle['a misspelt engine']?.status, output).toBe('failed');
      expect(byTitle['a misspelt engine']?.failureMessages.join('\n')).toMatch(
        /AgentHarnessError: Unknown engine "codx"\. Known engines: .*codex/,
      );
      expect(output).toContain("Serialized Error: { code: 'ENGINE_UNKNOWN'");
      expect(byTitle['a known engine the project did not enable']?.status, output).toBe('skipped');
      expect(output).toMatch(leftOutBy);
      // Neither test started a run.
      expect(fs.existsSync(path.join(tmp, 'runs')) ? fs.readdirSync(path.join(tmp, 'runs')) : []).toEqual([]);
    });
  },
);
