/**
 * The run store under damage and load: a stale index, a corrupt run.json, a truncated meta, a copied run directory,
 * a run root in the host's HOME, and many attempts at once (20 runs created together in one process, two processes
 * creating and updating runs together, 16 runs started together, 8 resumes of one run at once), through the
 * store API and the real CLI with a fake engine.
 */
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { isAgentHarnessError } from '../../src/errors/index.js';
import { AttemptMetaSchema, FcmpEventSchema, type RunIndexEntry } from '../../src/protocol/index.js';
import { createRun, listRuns, reserveAttempt, resolveRunSelector, updateRun } from '../../src/runtime/run-store.js';
import {
  BIN,
  createCliSandbox,
  installFakeEngine,
  REPO,
  runCliProcess,
  type CliRun,
  type CliSandbox,
} from '../helpers/cli.js';
import { indexLogFile, readIndexLog, readIndexRuns as readIndex } from '../helpers/run-index.js';
import { scaled } from '../helpers/load-scaled.js';

const STREAM = path.join(REPO, 'fixtures', 'streams', 'codex', 'done-marker.stdout.jsonl');
const THREAD = '01a2053b-9f5a-7bc0-b066-eb965712ebee';
const base = { engine: 'codex', translateMode: 0, modelMode: 'scripted', script: null } as const;

async function caught(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => null,
    (e: unknown) => e,
  );
}

describe('run store (API)', () => {
  let runRoot: string;
  beforeEach(() => {
    runRoot = fs.mkdtempSync(path.join(os.tmpdir(), 'ah-robust-'));
  });
  afterEach(() => fs.rmSync(runRoot, { recursive: true, force: true }));

  it('a stale index that still parses: a run it lacks resolves from the run directories, and the index is rebuilt', async () => {
    const a = await createRun(runRoot, base);
    const stale = fs.readFileSync(indexLogFile(runRoot), 'utf8');
    const b = await createRun(runRoot, base);
    fs.writeFileSync(indexLogFile(runRoot), stale);
    expect((await resolveRunSelector(runRoot, b.handle)).run_id).toBe(b.run_id);
    expect((await resolveRunSelector(runRoot, b.run_id)).run_dir).toBe(b.run_dir);
    expect(readIndex(runRoot).map((r) => r.run_id)).toEqual([a.run_id, b.run_id]);
  });

  it('an index entry whose directory is gone is not returned', async () => {
    const a = await createRun(runRoot, base);
    fs.rmSync(a.run_dir, { recursive: true });
    const error = await caught(resolveRunSelector(runRoot, a.handle));
    expect(isAgentHarnessError(error, 'RUN_NOT_FOUND')).toBe(true);
    expect(readIndex(runRoot)).toEqual([]);
  });

  it('a run.json with invalid JSON is RUN_STORE_CORRUPT naming the file, by path and in a scan', async () => {
    const run = await createRun(runRoot, base);
    const file = path.join(run.run_dir, '.audit', 'run.json');
    fs.writeFileSync(file, '{"run_id": "2026');
    const error = await caught(resolveRunSelector(runRoot, run.run_dir));
    expect(isAgentHarnessError(error, 'RUN_STORE_CORRUPT')).toBe(true);
    expect((error as Error).message).toContain(file);
    expect((error as { details?: Record<string, unknown> }).details).toMatchObject({ file, run_dir: run.run_dir });
    // By handle the (still valid) index entry is checked against the record.
    expect(isAgentHarnessError(await caught(resolveRunSelector(runRoot, run.handle)), 'RUN_STORE_CORRUPT')).toBe(true);
  });

  it('a copied run directory is RUN_DIR_MOVED by path, and the original is untouched', async () => {
    const run = await createRun(runRoot, base);
    const copy = fs.mkdtempSync(path.join(os.tmpdir(), 'ah-copy-'));
    try {
      fs.cpSync(run.run_dir, copy, { recursive: true });
      const error = await caught(resolveRunSelector(runRoot, copy));
      expect(isAgentHarnessError(error, 'RUN_DIR_MOVED')).toBe(true);
      expect((error as Error).message).toContain(run.run_dir);
      expect((await resolveRunSelector(runRoot, run.run_dir)).run_id).toBe(run.run_id);
    } finally {
      fs.rmSync(copy, { recursive: true, force: true });
    }
  });

  it('a run root moved as a whole: a handle names its run as RUN_DIR_MOVED, not RUN_NOT_FOUND', async () => {
    const run = await createRun(runRoot, base);
    const moved = `${runRoot}-moved`;
    fs.renameSync(runRoot, moved);
    try {
      const error = await caught(resolveRunSelector(moved, run.handle));
      expect(isAgentHarnessError(error, 'RUN_DIR_MOVED')).toBe(true);
      expect((error as Error).message).toContain(path.join(moved, run.run_id));
    } finally {
      fs.rmSync(moved, { recursive: true, force: true });
    }
  });

  it('the attempt count comes from the meta files, and a finished later attempt keeps the last completion', async () => {
    const run = await createRun(runRoot, base);
    for (let i = 0; i < 3; i += 1) await reserveAttempt(run.run_dir);
    fs.writeFileSync(path.join(run.run_dir, '.audit', 'meta.3.json'), JSON.stringify({ status: 'finished' }));
    // Attempt 2 finishing after attempt 3, with the count it read before it started (1).
    const updated = await updateRun(runRoot, run.run_id, { session_id: 's', last_completion: 'failed' }, 2);
    expect(updated).toMatchObject({ attempts: 3, last_completion: null });
    expect((await listRuns(runRoot))[0]).toMatchObject({ attempts: 3 });
  });

  it('20 createRun calls at once in one process all succeed with distinct handles, indexed in call order', async () => {
    const runs = await Promise.all(
      Array.from({ length: 20 }, (_, i) => createRun(runRoot, { ...base, label: `call ${i}` })),
    );
    expect(new Set(runs.map((run) => run.handle)).size).toBe(20);
    const labels = Array.from({ length: 20 }, (_, i) => `call ${i}`);
    expect((await listRuns(runRoot)).map((run) => run.label)).toEqual(labels);
    expect(readIndex(runRoot).map((run) => run.label)).toEqual(labels);
  });

  it(
    'two processes creating and updating runs at once (compacting the index between them) lose none and never share a handle',
    async () => {
      await createRun(runRoot, { ...base, label: 'before' });
      const generation = readIndexLog(runRoot).header.generation;
      const child = path.join(REPO, 'tests', 'helpers', 'create-runs-child.ts');
      const results = await Promise.all(
        ['left', 'right'].map((label) => runNodeAsync(['--import', 'tsx', child, runRoot, '25', label], { cwd: REPO })),
      );
      for (const result of results) expect(result.status, result.stderr).toBe(0);
      const childIds = results.flatMap((result) => JSON.parse(result.stdout) as string[]);
      expect(childIds).toHaveLength(50);
      expect(readIndexLog(runRoot).header.generation).not.toBe(generation);
      // This process read the index before the children rewrote it: its view must follow.
      for (const runs of [await listRuns(runRoot), readIndex(runRoot)]) {
        expect(runs).toHaveLength(51);
        expect(new Set(runs.map((run) => run.handle)).size).toBe(51);
        expect(
          runs
            .slice(1)
            .map((run) => run.run_id)
            .sort(),
        ).toEqual([...childIds].sort());
        for (const run of runs.slice(1)) expect(run.session_id).toBe(`${run.label} update 3`);
      }
    },
    scaled(60_000),
  );
});

/** Runs `node args` without blocking, so many can run at once. */
function runNodeAsync(args: string[], options: { cwd: string; env?: NodeJS.ProcessEnv }): Promise<CliRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, {
      cwd: options.cwd,
      env: options.env ?? process.env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
    });
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    child.on('error', reject);
    child.on('close', (status) => resolve({ status, stdout, stderr }));
  });
}

/** Runs the CLI in the sandbox without blocking, so many can run at once. */
function runCliAsync(sandbox: CliSandbox, args: string[]): Promise<CliRun> {
  return runNodeAsync([BIN, ...args], { cwd: sandbox.root, env: sandbox.env });
}

function summaryValue(stderr: string, label: string): string {
  const line = stderr.split('\n').find((l) => l.startsWith(`${label}: `));
  expect(line, `summary line "${label}" in ${stderr}`).toBeDefined();
  return line!.slice(label.length + 2);
}

function fcmpSeqs(runDir: string, attempt: number): number[] {
  const text = fs.readFileSync(path.join(runDir, '.audit', `fcmp.${attempt}.jsonl`), 'utf8');
  return text
    .split('\n')
    .filter(Boolean)
    .map((line) => FcmpEventSchema.parse(JSON.parse(line)).seq);
}

describe('run store (CLI)', () => {
  let sandbox: CliSandbox;
  let runRoot: string;
  beforeAll(() => {
    sandbox = createCliSandbox();
    installFakeEngine(sandbox, 'codex', { stdoutFile: STREAM });
    runRoot = path.join(sandbox.root, '.agent-harness', 'harness_runs');
  });
  afterAll(() => sandbox.cleanup());

  function start(prompt: string): { handle: string; runDir: string } {
    const run = runCliProcess(sandbox, ['start', '--prompt', prompt, 'codex']);
    expect(run.status, run.stderr).toBe(0);
    return { handle: summaryValue(run.stderr, 'Run handle'), runDir: summaryValue(run.stderr, 'Run directory') };
  }

  it('runs lists a run.json with invalid JSON as corrupt (table and --json), and addressing it is RUN_STORE_CORRUPT', () => {
    const { runDir } = start('to be corrupted');
    const file = path.join(runDir, '.audit', 'run.json');
    const good = fs.readFileSync(file, 'utf8');
    fs.writeFileSync(file, good.slice(0, 40));
    try {
      const listed = JSON.parse(runCliProcess(sandbox, ['runs', '--json']).stdout) as Array<Record<string, unknown>>;
      expect(listed.at(-1)).toEqual({
        run_dir: runDir,
        corrupt: { code: 'RUN_STORE_CORRUPT', file, message: expect.stringContaining(file) },
      });
      const table = runCliProcess(sandbox, ['runs']);
      const row = table.stdout.split('\n').find((line) => line.includes(path.basename(runDir)));
      expect(row).toMatch(/^CORRUPT\s/);
      expect(row).toContain('corrupt');
      const translated = runCliProcess(sandbox, ['translate', runDir, '--summary']);
      expect(translated.status).toBe(1);
      expect(translated.stderr).toContain(
        `agent-harness: error RUN_STORE_CORRUPT: Run record ${file} is not valid JSON`,
      );
      expect(translated.stderr).not.toContain('    at ');
    } finally {
      fs.writeFileSync(file, good);
    }
  });

  it('FIFOs in place of a run.json, a meta and a conformance report: runs, report and updateRun end, the record a corrupt row', () => {
    // The run directory is the engine's working directory: what it leaves there must not hang the next listing.
    const fifoRecord = start('fifo record');
    const record = path.join(fifoRecord.runDir, '.audit', 'run.json');
    const good = fs.readFileSync(record, 'utf8');
    const fifoMeta = start('fifo meta');
    const meta = path.join(fifoMeta.runDir, '.audit', 'meta.2.json');
    fs.rmSync(record);
    execFileSync('mkfifo', [record]);
    execFileSync('mkfifo', [meta]);
    try {
      // A read of either FIFO would block for good, and a blocked read does not give way to SIGTERM.
      const listed = spawnSync(process.execPath, [BIN, 'runs', '--json'], {
        cwd: sandbox.root,
        env: sandbox.env,
        encoding: 'utf8',
        timeout: scaled(60_000),
        killSignal: 'SIGKILL',
      });
      expect(listed.status, listed.stderr).toBe(0);
      const entries = JSON.parse(listed.stdout) as Array<Record<string, unknown>>;
      expect(entries).toContainEqual({
        run_dir: fifoRecord.runDir,
        corrupt: {
          code: 'RUN_STORE_CORRUPT',
          file: record,
          message: expect.stringContaining('a FIFO (named pipe), not a regular file'),
        },
      });
      expect(entries.find((entry) => entry.run_dir === fifoMeta.runDir)).toMatchObject({ handle: fifoMeta.handle });
      // The report reads every run's conformance reports: one that is a FIFO is skipped.
      const fifoReport = path.join(fifoMeta.runDir, '.audit', 'conformance-report.2.json');
      execFileSync('mkfifo', [fifoReport]);
      const report = spawnSync(process.execPath, [BIN, 'report', '--out', path.join(sandbox.root, 'fifo-report')], {
        cwd: sandbox.root,
        env: sandbox.env,
        encoding: 'utf8',
        timeout: scaled(60_000),
        killSignal: 'SIGKILL',
      });
      fs.rmSync(fifoReport, { force: true });
      expect(report.status, report.stderr).toBe(0);
      // An attempt that finishes reads the metas of later attempts (one finished first?): a FIFO there is no answer.
      // In a child process, so a blocked read is killed with it instead of blocking this worker.
      const script = `const { updateRun } = await import(${JSON.stringify(pathToFileURL(path.join(REPO, 'src', 'runtime', 'run-store.ts')).href)});
const run = await updateRun(${JSON.stringify(runRoot)}, ${JSON.stringify(path.basename(fifoMeta.runDir))}, { last_completion: 'completed' }, 1);
console.log(run.last_completion);`;
      const updated = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
        cwd: REPO,
        env: process.env,
        encoding: 'utf8',
        timeout: scaled(60_000),
        killSignal: 'SIGKILL',
      });
      expect(updated.status, updated.stderr).toBe(0);
      expect(updated.stdout.trim()).toBe('completed');
    } finally {
      fs.rmSync(record, { force: true });
      fs.writeFileSync(record, good);
      fs.rmSync(meta, { force: true });
    }
  });

  it('translate works from the raw logs when meta.N.json is truncated', () => {
    const { handle, runDir } = start('truncate my meta');
    const meta = path.join(runDir, '.audit', 'meta.1.json');
    fs.writeFileSync(meta, fs.readFileSync(meta, 'utf8').slice(0, 50));
    const summary = runCliProcess(sandbox, ['translate', handle, '--summary']);
    expect(summary.status, summary.stderr).toBe(0);
    expect(JSON.parse(summary.stdout)).toMatchObject({ session_id: THREAD, completed: true });
    expect(summary.stderr).toContain('translating attempt 1 from its raw logs alone');
    const fcmp = runCliProcess(sandbox, ['translate', handle, '--attempt', '1', '--translate', '2']);
    expect(fcmp.status, fcmp.stderr).toBe(0);
    expect(
      fcmp.stdout
        .trim()
        .split('\n')
        .map((l) => FcmpEventSchema.parse(JSON.parse(l)).seq),
    ).toEqual(fcmpSeqs(runDir, 1));
  });

  it('resuming a copied run directory is refused with RUN_DIR_MOVED; neither the copy nor the original changes', () => {
    const { runDir } = start('original');
    const copy = path.join(sandbox.root, 'copied-run');
    fs.cpSync(runDir, copy, { recursive: true });
    const originalRecord = fs.readFileSync(path.join(runDir, '.audit', 'run.json'), 'utf8');
    const resumed = runCliProcess(sandbox, ['resume', copy, 'hello']);
    expect(resumed.status).toBe(1);
    expect(resumed.stderr).toContain('agent-harness: error RUN_DIR_MOVED: ');
    expect(resumed.stderr).toContain(runDir);
    expect(fs.existsSync(path.join(copy, '.audit', 'meta.2.json'))).toBe(false);
    expect(fs.readFileSync(path.join(runDir, '.audit', 'run.json'), 'utf8')).toBe(originalRecord);
    // A copy inside the run root is listed as moved, not as a second run with the same handle.
    const inside = path.join(runRoot, 'copy-in-root');
    fs.cpSync(runDir, inside, { recursive: true });
    try {
      const listed = JSON.parse(runCliProcess(sandbox, ['runs', '--json']).stdout) as Array<{
        run_dir: string;
        corrupt?: { code: string };
      }>;
      expect(listed.filter((r) => r.run_dir === inside)).toEqual([
        expect.objectContaining({ corrupt: expect.objectContaining({ code: 'RUN_DIR_MOVED' }) }),
      ]);
      expect(listed.filter((r) => !r.corrupt && r.run_dir === runDir)).toHaveLength(1);
    } finally {
      fs.rmSync(inside, { recursive: true, force: true });
    }
  });

  it('a run root at HOME, above it, or in one of its dot-directories is refused with ENV_LEAK_DETECTED; one under ~/src is fine', () => {
    for (const root of [
      sandbox.home,
      path.dirname(sandbox.home),
      path.join(sandbox.home, '.codex'),
      path.join(sandbox.home, '.codex', 'runs'),
    ]) {
      const before = fs.readdirSync(sandbox.home);
      const run = runCliProcess(sandbox, ['start', '--prompt', 'x', 'codex'], { AGENT_HARNESS_RUN_ROOT: root });
      expect(run.status, root).toBe(1);
      expect(run.stderr).toContain(`agent-harness: error ENV_LEAK_DETECTED: Run root ${root} would leak`);
      expect(fs.readdirSync(sandbox.home)).toEqual(before);
    }
    const project = path.join(sandbox.home, 'src', 'x', 'runs');
    const ok = runCliProcess(sandbox, ['start', '--prompt', 'x', 'codex'], { AGENT_HARNESS_RUN_ROOT: project });
    expect(ok.status, ok.stderr).toBe(0);
    expect(summaryValue(ok.stderr, 'Run directory').startsWith(project)).toBe(true);
    fs.rmSync(path.join(sandbox.home, 'src'), { recursive: true, force: true });
  });

  it(
    '16 runs started at once get unique handles and all land in the index',
    async () => {
      const before = new Set(fs.existsSync(indexLogFile(runRoot)) ? readIndex(runRoot).map((r) => r.run_id) : []);
      const results = await Promise.all(
        Array.from({ length: 16 }, (_, i) => runCliAsync(sandbox, ['start', '--prompt', `parallel ${i}`, 'codex'])),
      );
      for (const result of results) expect(result.status, result.stderr).toBe(0);
      const handles = results.map((r) => summaryValue(r.stderr, 'Run handle'));
      expect(new Set(handles).size).toBe(16);
      const added = readIndex(runRoot).filter((r) => !before.has(r.run_id));
      expect(added.map((r) => r.handle).sort()).toEqual([...handles].sort());
      for (const run of added) {
        expect(run).toMatchObject({ attempts: 1, session_id: THREAD, last_completion: 'completed' });
        expect(fcmpSeqs(run.run_dir, 1)[0]).toBe(1);
      }
    },
    scaled(120_000),
  );

  it(
    '8 resumes of one run at once: one at a time runs (the others ENGINE_SESSION_BUSY), count and FCMP seq consistent',
    async () => {
      const { handle, runDir } = start('resume me 8 times');
      const results = await Promise.all(
        Array.from({ length: 8 }, (_, i) => runCliAsync(sandbox, ['resume', handle, `message ${i}`])),
      );
      // A resume holds the run's session lock for its whole attempt: one that finds it held is refused, no attempt made.
      const ran = results.filter((r) => r.status === 0);
      const refused = results.filter((r) => r.status !== 0);
      for (const result of refused) expect(result.stderr).toContain('agent-harness: error ENGINE_SESSION_BUSY: ');
      expect(ran.length).toBeGreaterThanOrEqual(1);
      const total = 1 + ran.length;
      expect(ran.map((r) => Number(summaryValue(r.stderr, 'Attempt'))).sort((a, b) => a - b)).toEqual(
        Array.from({ length: ran.length }, (_, i) => i + 2),
      );
      const record = JSON.parse(fs.readFileSync(path.join(runDir, '.audit', 'run.json'), 'utf8')) as RunIndexEntry;
      expect(record).toMatchObject({ attempts: total, session_id: THREAD });
      expect(readIndex(runRoot).find((r) => r.handle === handle)).toMatchObject({
        attempts: total,
        session_id: THREAD,
      });
      expect(fs.existsSync(path.join(runDir, '.audit', `meta.${total + 1}.json`))).toBe(false);
      const stdins = new Set<string>();
      let last = 0;
      for (let attempt = 1; attempt <= total; attempt += 1) {
        const meta = AttemptMetaSchema.parse(
          JSON.parse(fs.readFileSync(path.join(runDir, '.audit', `meta.${attempt}.json`), 'utf8')),
        );
        expect(meta).toMatchObject({ attempt, status: 'finished' });
        if (attempt > 1) stdins.add(fs.readFileSync(path.join(runDir, '.audit', `stdin.${attempt}.log`), 'utf8'));
        // seq strictly increasing across the run's fcmp files in attempt order, whatever order the attempts finished in.
        for (const seq of fcmpSeqs(runDir, attempt)) {
          expect(seq).toBeGreaterThan(last);
          last = seq;
        }
      }
      expect(stdins.size).toBe(ran.length);
      const listed = JSON.parse(runCliProcess(sandbox, ['runs', '--json']).stdout) as RunIndexEntry[];
      expect(listed.find((r) => r.handle === handle)).toMatchObject({ attempts: total });
    },
    scaled(120_000),
  );
});
