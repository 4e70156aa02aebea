/**
 * `agent-harness runs` filters (--engine, --failed, --last), the test or prompt that started each run, and
 * `runs prune` (--keep, --older-than, --dry-run), with fake engines replaying recorded streams.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunIndexEntry } from '../../src/protocol/index.js';
import { DONE_MARKER } from '../../src/protocol/versions.js';
import { createCliSandbox, installFakeEngine, REPO, runCliProcess, type CliSandbox } from '../helpers/cli.js';

const STREAMS = path.join(REPO, 'fixtures', 'streams');
/** A prompt that carries the done marker, as one made from an earlier agent's raw answer would. */
const SECOND = `second codex ${DONE_MARKER}`;
let sandbox: CliSandbox;
beforeAll(() => {
  sandbox = createCliSandbox();
  installFakeEngine(sandbox, 'codex', { stdoutFile: path.join(STREAMS, 'codex', 'done-marker.stdout.jsonl') });
  installFakeEngine(sandbox, 'claude', {
    stdoutFile: path.join(STREAMS, 'claude', 'error-429.stdout.jsonl'),
    exitCode: 1,
  });
  runCliProcess(sandbox, ['start', '--prompt', 'first codex', 'codex']);
  runCliProcess(sandbox, ['start', '--prompt', 'the claude one', 'claude']);
  runCliProcess(sandbox, ['start', '--prompt', SECOND, 'codex']);
});
afterAll(() => sandbox.cleanup());

const json = (args: string[]): RunIndexEntry[] =>
  JSON.parse(runCliProcess(sandbox, ['runs', '--json', ...args]).stdout) as RunIndexEntry[];

describe('agent-harness runs', () => {
  it('filters by engine, by a failed last attempt and to the newest N, and shows what started each run', () => {
    expect(json([]).map((r) => r.prompt)).toEqual(['first codex', 'the claude one', SECOND]);
    expect(json(['--engine', 'claude']).map((r) => r.engine)).toEqual(['claude']);
    expect(json(['--failed']).map((r) => r.prompt)).toEqual(['the claude one']);
    expect(json(['--last', '1']).map((r) => r.prompt)).toEqual([SECOND]);
    const table = runCliProcess(sandbox, ['runs']).stdout;
    expect(table.split('\n')[0]).toContain('TEST / PROMPT');
    expect(table).toContain('the claude one');
    // The table is read by a person: the done marker is left out there (the run record and --json keep it).
    expect(table).toMatch(/ second codex$/m);
    expect(table).not.toContain(DONE_MARKER);
  });

  it('prune removes old runs only when told how many to keep or how old, and can show first', () => {
    const refused = runCliProcess(sandbox, ['runs', 'prune']);
    expect(refused.status).toBe(2);
    expect(refused.stderr).toContain('needs --keep N and/or --older-than AGE');
    const badAge = runCliProcess(sandbox, ['runs', 'prune', '--older-than', 'banana']);
    expect(badAge.status).toBe(2);
    expect(badAge.stderr).toContain('--older-than takes a duration (30m, 2h, 7d) or an ISO date, not "banana"');
    const before = json([]);
    const dry = runCliProcess(sandbox, ['runs', 'prune', '--keep', '1', '--dry-run']);
    expect(dry.stdout.trim().split('\n')).toHaveLength(2);
    expect(json([])).toHaveLength(3);
    expect(runCliProcess(sandbox, ['runs', 'prune', '--older-than', '1d']).stderr).toContain('Removed 0 run(s)');
    const pruned = runCliProcess(sandbox, ['runs', 'prune', '--keep', '1']);
    expect(pruned.stderr).toContain('Removed 2 run(s); 1 left');
    const left = json([]);
    expect(left.map((r) => r.run_id)).toEqual([before.at(-1)!.run_id]);
    for (const run of before.slice(0, 2)) expect(fs.existsSync(run.run_dir)).toBe(false);
    expect(fs.existsSync(left[0]!.run_dir)).toBe(true);
  });

  it('prune in a copied run root neither lists nor removes the runs its index names in the original', () => {
    const original = json([]);
    expect(original.length).toBeGreaterThan(0);
    const root = path.dirname(original[0]!.run_dir);
    const copy = path.join(sandbox.root, 'copied-root');
    fs.cpSync(root, copy, { recursive: true });
    const env = { AGENT_HARNESS_RUN_ROOT: copy };
    const dry = runCliProcess(sandbox, ['runs', 'prune', '--keep', '0', '--dry-run'], env);
    expect(dry.stdout).not.toContain(root);
    expect(dry.stderr).toContain(`not pruned (outside ${copy}): ${original[0]!.handle} ${original[0]!.run_dir}`);
    runCliProcess(sandbox, ['runs', 'prune', '--keep', '0'], env);
    for (const run of original) expect(fs.existsSync(run.run_dir)).toBe(true);
  });
});
