import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { isAgentHarnessError } from '../../src/errors/index.js';
import { RunIndexSchema } from '../../src/protocol/index.js';
import { createRun, listRuns, reserveAttempt, resolveRunSelector, updateRun } from '../../src/runtime/run-store.js';

let runRoot: string;
beforeEach(() => {
  runRoot = fs.mkdtempSync(path.join(os.tmpdir(), 'ah-store-'));
});
afterEach(() => {
  fs.rmSync(runRoot, { recursive: true, force: true });
});

const base = { engine: 'codex', translateMode: 0, modelMode: 'scripted', script: null } as const;

async function expectCode(promise: Promise<unknown>, code: string): Promise<unknown> {
  const error = await promise.then(() => null, (e: unknown) => e);
  expect(isAgentHarnessError(error) ? error.code : error).toBe(code);
  return error;
}

describe('run store', () => {
  it('creates <YYYYMMDDTHHMMSS>-<engine>-<hex8> run dirs with unique handles and a valid index', async () => {
    const now = new Date('2026-11-23T10:20:30.000Z');
    const runs = await Promise.all(Array.from({ length: 12 }, () => createRun(runRoot, { ...base, now })));
    for (const run of runs) {
      expect(run.run_id).toMatch(/^20261123T102030-codex-[0-9a-f]{8}$/);
      expect(run.run_id.endsWith(run.handle)).toBe(true);
      expect(fs.statSync(run.run_dir).isDirectory()).toBe(true);
    }
    expect(new Set(runs.map((run) => run.handle)).size).toBe(12);
    const index = RunIndexSchema.parse(JSON.parse(fs.readFileSync(path.join(runRoot, 'index.json'), 'utf8')));
    expect(index.runs.map((run) => run.run_id).sort()).toEqual(runs.map((run) => run.run_id).sort());
  });

  it('resolves a path, a full run id, a handle and a unique handle prefix', async () => {
    const run = await createRun(runRoot, base);
    expect((await resolveRunSelector(runRoot, run.handle)).run_id).toBe(run.run_id);
    expect((await resolveRunSelector(runRoot, run.run_id)).run_id).toBe(run.run_id);
    expect((await resolveRunSelector(runRoot, run.run_dir)).run_id).toBe(run.run_id);
    expect((await resolveRunSelector(runRoot, run.handle.slice(0, 5))).run_id).toBe(run.run_id);
    expect((await resolveRunSelector(runRoot, path.relative(process.cwd(), run.run_dir))).run_id).toBe(run.run_id);
  });

  it('rejects an ambiguous prefix with RUN_SELECTOR_AMBIGUOUS naming the candidates', async () => {
    const runs = [];
    // Keep creating until two handles share a 4-hex prefix is too slow; instead forge two records.
    const a = await createRun(runRoot, base);
    const b = await createRun(runRoot, base);
    const forge = async (run: typeof a, handle: string): Promise<void> => {
      const runId = run.run_id.replace(/[0-9a-f]{8}$/, handle);
      const runDir = path.join(runRoot, runId);
      fs.renameSync(run.run_dir, runDir);
      fs.writeFileSync(path.join(runDir, '.audit', 'run.json'), JSON.stringify({ ...run, run_id: runId, handle, run_dir: runDir }));
      runs.push(runId);
    };
    await forge(a, 'abcd0001');
    await forge(b, 'abcd0002');
    fs.rmSync(path.join(runRoot, 'index.json'));
    const error = await expectCode(resolveRunSelector(runRoot, 'abcd'), 'RUN_SELECTOR_AMBIGUOUS');
    expect(String((error as Error).message)).toContain('abcd0001');
    expect((await resolveRunSelector(runRoot, 'abcd0002')).handle).toBe('abcd0002');
  });

  it('reports RUN_NOT_FOUND for unknown handles, ids and non-run paths', async () => {
    await createRun(runRoot, base);
    await expectCode(resolveRunSelector(runRoot, 'ffffffff'), 'RUN_NOT_FOUND');
    await expectCode(resolveRunSelector(runRoot, '20990101T000000-codex-00000000'), 'RUN_NOT_FOUND');
    await expectCode(resolveRunSelector(runRoot, os.tmpdir() + '/'), 'RUN_NOT_FOUND');
    await expectCode(resolveRunSelector(runRoot, ''), 'RUN_NOT_FOUND');
  });

  it('rebuilds a corrupt or missing index from the run directories', async () => {
    const run = await createRun(runRoot, base);
    fs.writeFileSync(path.join(runRoot, 'index.json'), '{"version": "agent-harness.index/1", "runs": [tor');
    expect((await listRuns(runRoot)).map((r) => r.run_id)).toEqual([run.run_id]);
    fs.rmSync(path.join(runRoot, 'index.json'));
    expect((await resolveRunSelector(runRoot, run.handle)).run_id).toBe(run.run_id);
  });

  it('reserves attempt numbers exclusively, never reusing one', async () => {
    const run = await createRun(runRoot, base);
    const attempts = await Promise.all(Array.from({ length: 8 }, () => reserveAttempt(run.run_dir)));
    expect(attempts.sort((x, y) => x - y)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    expect(await reserveAttempt(run.run_dir)).toBe(9);
  });

  it('updates run.json and the index together, the attempt count derived from the meta files', async () => {
    const run = await createRun(runRoot, base);
    await reserveAttempt(run.run_dir);
    await reserveAttempt(run.run_dir);
    await updateRun(runRoot, run.run_id, { session_id: 'thread-1', last_completion: 'completed' });
    const [indexed] = await listRuns(runRoot);
    expect(indexed).toMatchObject({ attempts: 2, session_id: 'thread-1', last_completion: 'completed' });
    const record = JSON.parse(fs.readFileSync(path.join(run.run_dir, '.audit', 'run.json'), 'utf8'));
    expect(record.session_id).toBe('thread-1');
  });
});
