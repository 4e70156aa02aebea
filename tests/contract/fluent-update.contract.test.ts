/**
 * The workflow fixture follows Vitest's snapshot conventions: the first run records next to the test, later runs
 * replay without calling the agent, and `vitest -u` records again. Run as child Vitest processes.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { scaled } from '../helpers/load-scaled.js';
import { VITEST, childVitestEnv } from '../helpers/child-vitest.js';

const REPO = path.resolve(import.meta.dirname, '..', '..');
const PROJECT = path.join(REPO, 'fixtures', 'workflow-project');
const RECORDINGS = path.join(PROJECT, 'tests', '__recordings__');
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'ah-wf-update-'));
afterAll(() => {
  fs.rmSync(tmp, { recursive: true, force: true });
  fs.rmSync(RECORDINGS, { recursive: true, force: true });
});

function vitest(args: string[], calls: string): number | null {
  const result = spawnSync(process.execPath, [VITEST, 'run', '--root', PROJECT, ...args], {
    cwd: REPO,
    env: childVitestEnv({ WF_CALLS: calls }),
    encoding: 'utf8',
    timeout: scaled(120_000),
  });
  return result.status;
}

describe('workflow recordings and vitest -u', () => {
  it('records on the first run, replays on the next, records again under -u', () => {
    fs.rmSync(RECORDINGS, { recursive: true, force: true });
    const calls = path.join(tmp, 'calls.log');
    const count = (): number =>
      fs.existsSync(calls) ? fs.readFileSync(calls, 'utf8').split('\n').filter(Boolean).length : 0;
    expect(vitest([], calls)).toBe(0);
    expect(count()).toBe(1);
    const files = fs
      .readdirSync(RECORDINGS, { recursive: true })
      .map(String)
      .filter((f) => f.endsWith('.json'));
    expect(files).toHaveLength(1);
    expect(vitest([], calls)).toBe(0);
    expect(count()).toBe(1); // replayed: the agent was not called
    expect(vitest(['-u'], calls)).toBe(0);
    expect(count()).toBe(2); // -u: live again, recording rewritten
  });
});
