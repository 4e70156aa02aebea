/**
 * The run store on a run root that cannot be written, and a corrupt run.json found by its handle. The run root is
 * made read-only (or full) for real: the test runs as root here, which file modes do not stop, so the CLI runs in
 * its own user+mount namespace (`unshare -rm`) where the run root is a read-only bind mount of itself, or a small
 * tmpfs filled to the last byte. `runs` and `translate` must list and translate from the run directories, with one
 * warning, and never write.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isAgentHarnessError } from '../../src/errors/index.js';
import { createRun, refreshRunIndex, resolveRunSelector } from '../../src/runtime/run-store.js';
import { deadOwner } from '../helpers/processes.js';
import { BIN, createCliSandbox, installFakeEngine, REPO, runCliProcess, type CliSandbox } from '../helpers/cli.js';
import { scaled } from '../helpers/load-scaled.js';

const STREAM = path.join(REPO, 'fixtures', 'streams', 'codex', 'done-marker.stdout.jsonl');
const base = { engine: 'codex', translateMode: 0, modelMode: 'scripted', script: null } as const;

const canUnshare = spawnSync('unshare', ['-rm', 'true'], { stdio: 'ignore' }).status === 0;
const quote = (arg: string): string => `'${arg.replace(/'/g, `'\\''`)}'`;

describe('a run.json that no longer parses, addressed by its handle', () => {
  it('is RUN_STORE_CORRUPT (as by path), also once the index was rebuilt without it, and by a handle prefix', async () => {
    const runRoot = fs.mkdtempSync(path.join(os.tmpdir(), 'ah-corrupt-'));
    try {
      const run = await createRun(runRoot, base);
      const file = path.join(run.run_dir, '.audit', 'run.json');
      fs.writeFileSync(file, '{"run_id": "2026');
      // `runs` rescans and rewrites the index without the broken run: the handle is then known only by its directory.
      const scan = await refreshRunIndex(runRoot);
      expect(scan.runs).toEqual([]);
      for (const selector of [run.handle, run.handle.slice(0, 5), run.run_id]) {
        const error = await resolveRunSelector(runRoot, selector).catch((e: unknown) => e);
        expect(isAgentHarnessError(error, 'RUN_STORE_CORRUPT'), String(error)).toBe(true);
        expect((error as Error).message).toContain(file);
      }
      const other = await resolveRunSelector(runRoot, 'deadbeef').catch((e: unknown) => e);
      expect(isAgentHarnessError(other, 'RUN_NOT_FOUND')).toBe(true);
    } finally {
      fs.rmSync(runRoot, { recursive: true, force: true });
    }
  });
});

describe.skipIf(!canUnshare)('runs and translate on a run root that cannot be written', () => {
  let sandbox: CliSandbox;
  let runRoot: string;
  const handles: string[] = [];

  beforeAll(() => {
    sandbox = createCliSandbox();
    installFakeEngine(sandbox, 'codex', { stdoutFile: STREAM });
    runRoot = path.join(sandbox.root, '.agent-harness', 'harness_runs');
    for (const prompt of ['first', 'second']) {
      const run = runCliProcess(sandbox, ['start', '--prompt', prompt, 'codex']);
      expect(run.status, run.stderr).toBe(0);
      handles.push(/^Run handle: (\S+)$/m.exec(run.stderr)![1]!);
    }
  });
  afterAll(() => sandbox.cleanup());

  /** Runs the CLI in a user+mount namespace after `setup` (shell) has made the run root unwritable there. */
  function cliInNamespace(setup: string, args: string[]): { status: number | null; stdout: string; stderr: string } {
    const command = `${setup} && exec ${[process.execPath, BIN, ...args].map(quote).join(' ')}`;
    const result = spawnSync('unshare', ['-rm', 'sh', '-c', command], {
      cwd: sandbox.root,
      env: sandbox.env,
      encoding: 'utf8',
      timeout: scaled(120_000),
    });
    return { status: result.status, stdout: result.stdout, stderr: result.stderr };
  }

  /** Removes the index so that listing must rebuild it (the write that fails). */
  function dropIndex(): void {
    fs.rmSync(path.join(runRoot, 'index.jsonl'), { force: true });
  }

  function expectListed(run: { status: number | null; stdout: string; stderr: string }, errno: string): void {
    expect(run.status, run.stderr).toBe(0);
    const listed = JSON.parse(run.stdout) as { handle: string }[];
    expect(listed.map((entry) => entry.handle)).toEqual(handles);
    const warnings = run.stderr.split('\n').filter((line) => line.includes('warning'));
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain(errno);
    expect(warnings[0]).toContain(runRoot);
  }

  it('a read-only run root: runs lists every run with one warning, translate works, nothing is written', () => {
    dropIndex();
    const readOnly = `mount --bind ${quote(runRoot)} ${quote(runRoot)} && mount -o remount,bind,ro ${quote(runRoot)}`;
    expectListed(cliInNamespace(readOnly, ['runs', '--json']), 'EROFS');
    const table = cliInNamespace(readOnly, ['runs']);
    expect(table.status, table.stderr).toBe(0);
    expect(table.stdout).toContain(handles[1]);
    const translated = cliInNamespace(readOnly, ['translate', handles[0]!, '--summary']);
    expect(translated.status, translated.stderr).toBe(0);
    expect(translated.stdout).toContain('"engine"');
    // The handle is found by reading the index in memory; a warning only when a rebuild could not be saved.
    expect(translated.stderr.split('\n').filter((line) => line.includes('warning')).length).toBeLessThanOrEqual(1);
    const byPrefix = cliInNamespace(readOnly, ['translate', handles[1]!.slice(0, 6), '--summary']);
    expect(byPrefix.status, byPrefix.stderr).toBe(0);
    expect(fs.existsSync(path.join(runRoot, 'index.jsonl'))).toBe(false);
  });

  it('a full run root (a tmpfs filled to the last byte): runs lists every run with one warning', () => {
    dropIndex();
    const stash = fs.mkdtempSync(path.join(os.tmpdir(), 'ah-full-stash-'));
    try {
      fs.cpSync(runRoot, stash, { recursive: true });
      const full = [
        `mount -t tmpfs -o size=4m tmpfs ${quote(runRoot)}`,
        `cp -a ${quote(`${stash}/.`)} ${quote(runRoot)}`,
        `{ dd if=/dev/zero of=${quote(path.join(runRoot, 'filler'))} bs=4k 2>/dev/null || true; }`,
      ].join(' && ');
      expectListed(cliInNamespace(full, ['runs', '--json']), 'ENOSPC');
    } finally {
      fs.rmSync(stash, { recursive: true, force: true });
    }
  });

  it('an interrupted attempt on a read-only run root: runs lists it and translate reads it unsealed, with one warning', async () => {
    const runDir = path.join(runRoot, fs.readdirSync(runRoot).find((name) => name.endsWith(`-${handles[0]}`))!);
    const metaFile = path.join(runDir, '.audit', 'meta.1.json');
    const meta = JSON.parse(fs.readFileSync(metaFile, 'utf8')) as Record<string, unknown>;
    fs.writeFileSync(metaFile, JSON.stringify({ ...meta, status: 'running', owner: await deadOwner() }));
    const readOnly = `mount --bind ${quote(runRoot)} ${quote(runRoot)} && mount -o remount,bind,ro ${quote(runRoot)}`;
    const listed = cliInNamespace(readOnly, ['runs', '--json']);
    expect(listed.status, listed.stderr).toBe(0);
    const translated = cliInNamespace(readOnly, ['translate', handles[0]!, '--summary']);
    expect(translated.status, translated.stderr).toBe(0);
    const warnings = translated.stderr.split('\n').filter((line) => line.includes('warning'));
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain('cannot be sealed');
    expect(JSON.parse(fs.readFileSync(metaFile, 'utf8')).status).toBe('running');
  });
});
