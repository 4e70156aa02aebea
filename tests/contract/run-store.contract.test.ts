import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { isAgentHarnessError } from '../../src/errors/index.js';
import { RUN_INDEX_VERSION, type RunIndexEntry } from '../../src/protocol/index.js';
import { maxIndexLines } from '../../src/runtime/run-index-log.js';
import { createRun, listRuns, reserveAttempt, resolveRunSelector, updateRun } from '../../src/runtime/run-store.js';
import { indexLogFile, readIndexLog, readIndexRuns } from '../helpers/run-index.js';

let runRoot: string;
beforeEach(() => {
  runRoot = fs.mkdtempSync(path.join(os.tmpdir(), 'ah-store-'));
});
afterEach(() => {
  fs.rmSync(runRoot, { recursive: true, force: true });
});

const base = { engine: 'codex', translateMode: 0, modelMode: 'scripted', script: null } as const;

async function expectCode(promise: Promise<unknown>, code: string): Promise<unknown> {
  const error = await promise.then(
    () => null,
    (e: unknown) => e,
  );
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
    expect(
      readIndexRuns(runRoot)
        .map((run) => run.run_id)
        .sort(),
    ).toEqual(runs.map((run) => run.run_id).sort());
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
      fs.writeFileSync(
        path.join(runDir, '.audit', 'run.json'),
        JSON.stringify({ ...run, run_id: runId, handle, run_dir: runDir }),
      );
      runs.push(runId);
    };
    await forge(a, 'abcd0001');
    await forge(b, 'abcd0002');
    fs.rmSync(indexLogFile(runRoot));
    const error = await expectCode(resolveRunSelector(runRoot, 'abcd'), 'RUN_SELECTOR_AMBIGUOUS');
    expect(String((error as Error).message)).toContain('abcd0001');
    expect((await resolveRunSelector(runRoot, 'abcd0002')).handle).toBe('abcd0002');
  });

  it('reports RUN_NOT_FOUND for unknown handles, ids and non-run paths', async () => {
    await createRun(runRoot, base);
    await expectCode(resolveRunSelector(runRoot, 'ffffffff'), 'RUN_NOT_FOUND');
    await expectCode(resolveRunSelector(runRoot, '20990101T000000-codex-00000000'), 'RUN_NOT_FOUND');
    await expectCode(resolveRunSelector(runRoot, `${os.tmpdir()}/`), 'RUN_NOT_FOUND');
    await expectCode(resolveRunSelector(runRoot, ''), 'RUN_NOT_FOUND');
  });

  it('rebuilds a corrupt or missing index (or an unreadable legacy index.json) from the run directories', async () => {
    const run = await createRun(runRoot, base);
    fs.writeFileSync(indexLogFile(runRoot), '{"version": "agent-harness.index/2", "gener\n{tor');
    expect((await listRuns(runRoot)).map((r) => r.run_id)).toEqual([run.run_id]);
    fs.rmSync(indexLogFile(runRoot));
    expect((await resolveRunSelector(runRoot, run.handle)).run_id).toBe(run.run_id);
    fs.rmSync(indexLogFile(runRoot), { force: true });
    fs.writeFileSync(path.join(runRoot, 'index.json'), '{"version": "agent-harness.index/1", "runs": [tor');
    expect((await listRuns(runRoot)).map((r) => r.run_id)).toEqual([run.run_id]);
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

/** Replaces the index log with a copy of `text` under a new inode: no process has read that file yet. */
function replaceIndexLog(runRoot: string, text: string): void {
  fs.writeFileSync(`${indexLogFile(runRoot)}.new`, text);
  fs.renameSync(`${indexLogFile(runRoot)}.new`, indexLogFile(runRoot));
}

describe('run index log (index.jsonl)', () => {
  const ids = (runs: ReadonlyArray<{ run_id: string }>): string[] => runs.map((run) => run.run_id);

  it('createRun and updateRun each append one line: the file keeps its inode and every byte it had', async () => {
    const runs = [];
    for (let i = 0; i < 5; i += 1) runs.push(await createRun(runRoot, base));
    const inode = fs.statSync(indexLogFile(runRoot)).ino;
    const before = readIndexLog(runRoot).text;
    const created = await createRun(runRoot, base);
    const afterCreate = readIndexLog(runRoot).text;
    expect(afterCreate.slice(0, before.length)).toBe(before);
    expect(afterCreate.slice(before.length)).toBe(`${JSON.stringify(created)}\n`);
    await reserveAttempt(runs[1]!.run_dir);
    const updated = await updateRun(runRoot, runs[1]!.run_id, { session_id: 'thread-2', last_completion: 'completed' });
    const afterUpdate = readIndexLog(runRoot).text;
    expect(afterUpdate.slice(0, afterCreate.length)).toBe(afterCreate);
    expect(afterUpdate.slice(afterCreate.length)).toBe(`${JSON.stringify(updated)}\n`);
    expect(fs.statSync(indexLogFile(runRoot)).ino).toBe(inode);
    // The updated run keeps its place; its last line wins.
    expect(ids(await listRuns(runRoot))).toEqual(ids([...runs, created]));
    expect(readIndexRuns(runRoot)[1]).toEqual(updated);
    expect((await listRuns(runRoot))[1]).toEqual(updated);
  });

  it('compacts the log when it holds many more lines than runs, keeping every run, its latest state and their order', async () => {
    const runs = [await createRun(runRoot, base), await createRun(runRoot, base), await createRun(runRoot, base)];
    const generation = readIndexLog(runRoot).header.generation;
    const updates = maxIndexLines(runs.length) + 10;
    for (let i = 0; i < updates; i += 1) await updateRun(runRoot, runs[1]!.run_id, { label: `update ${i}` });
    const log = readIndexLog(runRoot);
    expect(log.header.generation).not.toBe(generation);
    expect(log.lines.length).toBeLessThanOrEqual(maxIndexLines(runs.length));
    expect(ids(log.runs)).toEqual(ids(runs));
    expect(log.runs[1]!.label).toBe(`update ${updates - 1}`);
    expect((await listRuns(runRoot)).map((run) => run.label)).toEqual([null, `update ${updates - 1}`, null]);
  });

  it('compacts the log of runs each created and finished once (two lines a run, as every CLI start leaves)', async () => {
    const finished = async (): Promise<RunIndexEntry> =>
      updateRun(runRoot, (await createRun(runRoot, base)).run_id, { label: 'finished' });
    const runs = [await finished()];
    const generation = readIndexLog(runRoot).header.generation;
    // Enough runs that two lines each pass the bound: 2n > 1.5n + slack.
    while (runs.length < 2 * maxIndexLines(0) + 2) runs.push(await finished());
    const log = readIndexLog(runRoot);
    expect(log.header.generation).not.toBe(generation);
    expect(log.lines.length).toBeLessThanOrEqual(maxIndexLines(runs.length));
    expect(ids(log.runs)).toEqual(ids(runs));
  });

  it('an unterminated last line (a crash mid-append) is ignored, read incrementally or whole, and the next write drops it', async () => {
    const runs = [await createRun(runRoot, base), await createRun(runRoot, base), await createRun(runRoot, base)];
    await listRuns(runRoot);
    fs.appendFileSync(indexLogFile(runRoot), '{"run_id":"20261123T102030-codex-0123');
    expect(ids(await listRuns(runRoot))).toEqual(ids(runs));
    replaceIndexLog(runRoot, fs.readFileSync(indexLogFile(runRoot), 'utf8'));
    expect(ids(await listRuns(runRoot))).toEqual(ids(runs));
    const next = await createRun(runRoot, base);
    expect(ids(readIndexRuns(runRoot))).toEqual(ids([...runs, next]));
    expect(ids(await listRuns(runRoot))).toEqual(ids([...runs, next]));
  });

  it('a corrupt line in the middle falls back to a rescan that loses no run, not even one outside the run root', async () => {
    const outside = fs.mkdtempSync(path.join(os.tmpdir(), 'ah-store-cwd-'));
    try {
      const runs = [
        await createRun(runRoot, base),
        await createRun(runRoot, base),
        await createRun(runRoot, { ...base, runDir: outside }),
        await createRun(runRoot, base),
      ];
      const lines = readIndexLog(runRoot).text.split('\n');
      lines[2] = '{"run_id": "not a run"}';
      replaceIndexLog(runRoot, lines.join('\n'));
      expect(ids(await listRuns(runRoot)).sort()).toEqual(ids(runs).sort());
      // Appended after a line this process has read: the same.
      fs.appendFileSync(indexLogFile(runRoot), 'not json\n');
      expect(ids(await listRuns(runRoot)).sort()).toEqual(ids(runs).sort());
      const next = await createRun(runRoot, base);
      expect(ids(readIndexRuns(runRoot)).sort()).toEqual(ids([...runs, next]).sort());
      expect((await resolveRunSelector(runRoot, runs[2]!.handle)).run_dir).toBe(outside);
    } finally {
      fs.rmSync(outside, { recursive: true, force: true });
    }
  });

  it('a legacy index.json is read as it stands, then migrated to index.jsonl on the next write, its order kept', async () => {
    const [a, b, c] = [await createRun(runRoot, base), await createRun(runRoot, base), await createRun(runRoot, base)];
    fs.rmSync(indexLogFile(runRoot));
    // An order the run directories alone would not give: the migration must take the legacy index's.
    const legacy = [c!, a!, b!];
    fs.writeFileSync(
      path.join(runRoot, 'index.json'),
      `${JSON.stringify({ version: RUN_INDEX_VERSION, runs: legacy }, null, 2)}\n`,
    );
    expect(ids(await listRuns(runRoot))).toEqual(ids(legacy));
    expect((await resolveRunSelector(runRoot, a!.handle)).run_id).toBe(a!.run_id);
    const d = await createRun(runRoot, base);
    expect(fs.existsSync(path.join(runRoot, 'index.json'))).toBe(false);
    expect(ids(readIndexRuns(runRoot))).toEqual(ids([...legacy, d]));
    expect(ids(await listRuns(runRoot))).toEqual(ids([...legacy, d]));
  });
});
