/**
 * kill -9 of `agent-harness start` mid-attempt (the agent's shell sits in `sleep 30`) with the real codex CLI:
 * the trust entry the dead harness leased in codex `config.toml` is reclaimed by the next command.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import { afterAll, describe, expect, it } from 'vitest';
import { sealAttemptIfOrphaned } from '../../src/core/seal-attempt.js';

const BIN = path.resolve('bin/agent-harness.js');
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'ah-kill-'));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

function writeScript(name: string, turns: unknown[]): string {
  const file = path.join(tmp, name);
  fs.writeFileSync(file, JSON.stringify({ version: 1, turns }));
  return file;
}

/** Polls `check` (no fixed sleep as synchronization: it returns as soon as the condition holds). */
async function waitFor(check: () => boolean, what: string, limitMs = 120_000): Promise<void> {
  const deadline = Date.now() + limitMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

describe('harness killed mid-attempt (codex)', () => {
  it('seals the orphaned attempt from its raw logs and the next start reclaims the trust lease', async () => {
    const env = { ...process.env, SKILL_RUNNER_DATA_DIR: path.join(tmp, 'data') };
    const home = path.join(tmp, 'data', 'agent_cache', 'agent_home');
    const config = path.join(home, '.codex', 'config.toml');
    const slow = writeScript('slow.json', [{ type: 'shell', command: 'sleep 30' }, { type: 'final', text: 'done', done: true }]);
    let out = '';
    const harness = execa('node', [BIN, 'start', '--script', slow, '--prompt', 'go', 'codex'], { env, reject: false, all: true });
    harness.all!.on('data', (chunk: Buffer) => (out += chunk.toString()));
    await waitFor(() => out.includes('command_execution'), 'the agent shell call');
    const runDir = /^run_dir: (.+)$/m.exec(out)![1]!;
    expect(fs.readFileSync(config, 'utf8')).toContain(runDir);
    expect(fs.readdirSync(path.join(home, 'leases'))).toHaveLength(1);

    // The owner is alive: sealing must leave the running attempt alone.
    expect(await sealAttemptIfOrphaned(runDir, 1)).toBeNull();

    harness.kill('SIGKILL');
    await harness;
    // The dead harness could not clean up: its trust entry is still there.
    expect(fs.readFileSync(config, 'utf8')).toContain(runDir);

    const sealed = await sealAttemptIfOrphaned(runDir, 1);
    const threadId = /"thread_id":"([^"]+)"/.exec(fs.readFileSync(path.join(runDir, '.audit', 'stdout.1.log'), 'utf8'))![1];
    expect(sealed).toMatchObject({ status: 'finished', completion: { state: 'failed', reason: 'HARNESS_INTERRUPTED' }, error: { code: 'HARNESS_INTERRUPTED' }, session_id: threadId });
    const meta = JSON.parse(fs.readFileSync(path.join(runDir, '.audit', 'meta.1.json'), 'utf8'));
    expect(meta.completion).toEqual({ state: 'failed', reason: 'HARNESS_INTERRUPTED' });
    const fcmp = fs.readFileSync(path.join(runDir, '.audit', 'fcmp.1.jsonl'), 'utf8').trim().split('\n');
    expect(fcmp.length).toBeGreaterThan(0);
    expect(await sealAttemptIfOrphaned(runDir, 1)).toBeNull();

    const quick = writeScript('quick.json', [{ type: 'final', text: 'done', done: true }]);
    const next = await execa('node', [BIN, 'start', '--script', quick, '--prompt', 'go', 'codex'], { env, reject: false });
    expect(next.exitCode).toBe(0);
    expect(fs.readFileSync(config, 'utf8')).not.toContain(runDir);
    expect(fs.readdirSync(path.join(home, 'leases'))).toEqual([]);
  }, 300_000);
});
