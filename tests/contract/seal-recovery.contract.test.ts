/**
 * Sealing an attempt whose harness died, with the real CLI and a fake engine: `doctor --repair` seals it and
 * reclaims dead owners' leases; several commands finding the same orphan at once seal it once (under its lock).
 */
import fs from 'node:fs';
import path from 'node:path';
import { execa } from 'execa';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { AttemptMetaSchema, FcmpEventSchema } from '../../src/protocol/index.js';
import { takeLease } from '../../src/runtime/lease.js';
import { deadOwner } from '../helpers/processes.js';
import { BIN, createCliSandbox, installFakeEngine, REPO, runCliProcess, type CliSandbox } from '../helpers/cli.js';
import { scaled } from '../helpers/load-scaled.js';

const STREAM = path.join(REPO, 'fixtures', 'streams', 'codex', 'done-marker.stdout.jsonl');
let sandbox: CliSandbox;

beforeEach(() => {
  sandbox = createCliSandbox();
  installFakeEngine(sandbox, 'codex', { stdoutFile: STREAM });
});
afterEach(() => sandbox.cleanup());

/** Runs a start, then makes its attempt look like the harness died mid-way: meta `running`, owner gone, no FCMP. */
async function orphanedRun(): Promise<{ runDir: string; metaFile: string }> {
  const started = runCliProcess(sandbox, ['start', '--prompt', 'hi', 'codex']);
  expect(started.status, started.stderr).toBe(0);
  const runDir = /^run_dir: (.+)$/m.exec(started.stderr)![1]!;
  const metaFile = path.join(runDir, '.audit', 'meta.1.json');
  const meta = JSON.parse(fs.readFileSync(metaFile, 'utf8'));
  fs.writeFileSync(
    metaFile,
    JSON.stringify({ ...meta, status: 'running', completion: null, exit: null, error: null, owner: await deadOwner() }),
  );
  fs.writeFileSync(path.join(runDir, '.audit', 'fcmp.1.jsonl'), '');
  return { runDir, metaFile };
}

// Each case runs the CLI three to five times in fresh processes: on a loaded 2-core machine that can take longer than
// the contract project's 60 s per test, so the bound is generous (no case measures time).
describe('sealing orphaned attempts', { timeout: scaled(240_000) }, () => {
  it("doctor --repair seals the orphan and reclaims a dead owner's lease", async () => {
    const { metaFile } = await orphanedRun();
    const agentHome = path.join(sandbox.root, '.agent-harness', 'agent_cache', 'agent_home');
    const config = path.join(agentHome, '.codex', 'config.toml');
    fs.mkdirSync(path.dirname(config), { recursive: true });
    fs.writeFileSync(config, '[projects."/gone/run"]\ntrust_level = "trusted"\n');
    await takeLease(agentHome, config, 'TOML', ['projects', '/gone/run'], await deadOwner());

    const repaired = runCliProcess(sandbox, ['doctor', '--repair']);
    expect(repaired.stderr).toContain(
      'repair: 1 trust entry of dead harness processes reclaimed, interrupted attempts sealed in 1 run(s)',
    );
    expect(fs.readFileSync(config, 'utf8')).not.toContain('/gone/run');
    const meta = AttemptMetaSchema.parse(JSON.parse(fs.readFileSync(metaFile, 'utf8')));
    expect(meta).toMatchObject({ status: 'finished', completion: { state: 'failed', reason: 'HARNESS_INTERRUPTED' } });
  });

  it('runs seals the orphan alone: a finished meta that mentions "running" and a truncated one are left as they are', async () => {
    const { metaFile } = await orphanedRun();
    const start = (prompt: string): string => {
      const result = runCliProcess(sandbox, ['start', '--prompt', prompt, 'codex']);
      expect(result.status, result.stderr).toBe(0);
      return path.join(/^run_dir: (.+)$/m.exec(result.stderr)![1]!, '.audit', 'meta.1.json');
    };
    // Its meta holds the JSON string "running" (the prompt), so it is parsed: finished, not sealed.
    const mentions = start('running');
    expect(fs.readFileSync(mentions, 'utf8')).toContain('"running"');
    // A meta cut short while running: not JSON, so no orphan to seal (translate works from the raw logs).
    const truncated = start('hi');
    fs.writeFileSync(truncated, '{"version":"agent-harness.meta/1","status":"running","ow');
    const before = [mentions, truncated].map((file) => fs.readFileSync(file, 'utf8'));

    const listed = runCliProcess(sandbox, ['runs', '--json']);
    expect(listed.status, listed.stderr).toBe(0);
    expect((JSON.parse(listed.stdout) as unknown[]).length).toBe(3);
    expect(AttemptMetaSchema.parse(JSON.parse(fs.readFileSync(metaFile, 'utf8'))).error?.code).toBe(
      'HARNESS_INTERRUPTED',
    );
    expect([mentions, truncated].map((file) => fs.readFileSync(file, 'utf8'))).toEqual(before);
  });

  it('four commands finding the same orphan at once seal it once: one FCMP, seq unique', async () => {
    const { runDir, metaFile } = await orphanedRun();
    const runs = await Promise.all(
      [0, 1, 2, 3].map(() =>
        execa(process.execPath, [BIN, 'runs', '--json'], {
          cwd: sandbox.root,
          env: sandbox.env,
          extendEnv: false,
          reject: false,
        }),
      ),
    );
    for (const result of runs) expect(result.exitCode, result.stderr).toBe(0);
    const meta = AttemptMetaSchema.parse(JSON.parse(fs.readFileSync(metaFile, 'utf8')));
    expect(meta.error?.code).toBe('HARNESS_INTERRUPTED');
    const fcmp = fs
      .readFileSync(path.join(runDir, '.audit', 'fcmp.1.jsonl'), 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((line) => FcmpEventSchema.parse(JSON.parse(line)));
    const seqs = fcmp.map((event) => event.seq);
    expect(new Set(seqs).size).toBe(seqs.length);
    expect(
      fcmp.filter((event) => event.type === 'conversation.failed' || event.type === 'conversation.completed'),
    ).toHaveLength(1);
  });
});
