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

/**
 * Starts `agent-harness start --script <sleep 30 then done> --prompt go <engine>` with its data under `dataDir`, and
 * resolves once the agent's shell call shows in the output (`marker`), with the run dir it printed.
 */
async function startSleeping(engine: string, dataDir: string, marker: string) {
  const env = { ...process.env, SKILL_RUNNER_DATA_DIR: path.join(tmp, dataDir) };
  const slow = writeScript(`slow-${engine}.json`, [{ type: 'shell', command: 'sleep 30' }, { type: 'final', text: 'done', done: true }]);
  const state = { out: '' };
  const harness = execa('node', [BIN, 'start', '--script', slow, '--prompt', 'go', engine], { env, reject: false, all: true });
  harness.all!.on('data', (chunk: Buffer) => (state.out += chunk.toString()));
  await waitFor(() => state.out.includes(marker), 'the agent shell call');
  return { env, harness, runDir: /^run_dir: (.+)$/m.exec(state.out)![1]! };
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
  it('after kill -9, translate seals the attempt (failed HARNESS_INTERRUPTED, session recovered), resume continues it, no trust entry left', async () => {
    const home = path.join(tmp, 'data', 'agent_cache', 'agent_home');
    const config = path.join(home, '.codex', 'config.toml');
    const { env, harness, runDir } = await startSleeping('codex', 'data', 'command_execution');
    expect(fs.readFileSync(config, 'utf8')).toContain(runDir);
    expect(fs.readdirSync(path.join(home, 'leases'))).toHaveLength(1);

    // The owner is alive: sealing must leave the running attempt alone.
    expect(await sealAttemptIfOrphaned(runDir, 1)).toBeNull();

    const engineKids = (await execa('pgrep', ['-P', String(harness.pid)], { reject: false })).stdout.split('\n').filter(Boolean).map(Number);
    harness.kill('SIGKILL');
    await harness;
    // A dead harness cannot end its engine: the orphaned codex keeps the thread's writer lock, so resume would be
    // refused. Ending the engine's process group here stands in for the PID-namespace containment (issue 14,
    // containment part) that ends it with the harness.
    for (const pid of engineKids) {
      try {
        process.kill(-pid, 'SIGKILL');
      } catch {
        try { process.kill(pid, 'SIGKILL'); } catch { /* already gone */ }
      }
    }
    await waitFor(() => engineKids.every((pid) => { try { process.kill(pid, 0); return false; } catch { return true; } }), 'the orphaned engine to end');
    // The dead harness could not clean up: its trust entry is still there.
    expect(fs.readFileSync(config, 'utf8')).toContain(runDir);

    // `runs` seals the orphaned attempt from its raw logs and lists it as failed.
    const listed = await execa('node', [BIN, 'runs', '--json'], { env, reject: false });
    expect(JSON.parse(listed.stdout)).toEqual([expect.objectContaining({ run_dir: runDir, attempts: 1, last_completion: 'failed' })]);
    const threadId = /"thread_id":"([^"]+)"/.exec(fs.readFileSync(path.join(runDir, '.audit', 'stdout.1.log'), 'utf8'))![1];
    const translated = await execa('node', [BIN, 'translate', runDir, '--summary'], { env, reject: false });
    expect(translated.stderr).toBe('');
    expect(JSON.parse(translated.stdout)).toMatchObject({ engine: 'codex', session_id: threadId });
    const meta = JSON.parse(fs.readFileSync(path.join(runDir, '.audit', 'meta.1.json'), 'utf8'));
    expect(meta).toMatchObject({ status: 'finished', completion: { state: 'failed', reason: 'HARNESS_INTERRUPTED' }, error: { code: 'HARNESS_INTERRUPTED' }, session_id: threadId });
    expect(fs.readFileSync(path.join(runDir, '.audit', 'fcmp.1.jsonl'), 'utf8').trim().length).toBeGreaterThan(0);
    const record = JSON.parse(fs.readFileSync(path.join(runDir, '.audit', 'run.json'), 'utf8'));
    expect(record).toMatchObject({ attempts: 1, session_id: threadId, last_completion: 'failed' });
    // The dead owner's trust lease was reclaimed by that command.
    expect(fs.readFileSync(config, 'utf8')).not.toContain(runDir);
    expect(await sealAttemptIfOrphaned(runDir, 1)).toBeNull();

    // `resume` continues the same codex session in attempt 2.
    // Turns are picked by the number of model outputs already in the session's history (the interrupted shell
    // call and its output count), so every later turn is the final answer.
    const done = { type: 'final', text: 'done', done: true };
    const quick = writeScript('quick.json', [{ type: 'shell', command: 'true' }, done, done, done, done]);
    const resumed = await execa('node', [BIN, 'resume', runDir, 'next', '--script', quick], { env, reject: false });
    expect(resumed.exitCode, resumed.stderr + resumed.stdout.slice(-1500)).toBe(0);
    const meta2 = JSON.parse(fs.readFileSync(path.join(runDir, '.audit', 'meta.2.json'), 'utf8'));
    expect(meta2).toMatchObject({ launch: 'resume', session_id: threadId, completion: { state: 'completed' } });
    expect(fs.readFileSync(config, 'utf8')).not.toContain(runDir);
    expect(fs.readdirSync(path.join(home, 'leases'))).toEqual([]);
  }, 300_000);
});

describe('harness killed mid-attempt (claude)', () => {
  it('the .claude.json trust entry of the dead run is reclaimed by `runs`, and the attempt is sealed', async () => {
    const state = path.join(tmp, 'data-claude', 'agent_cache', 'agent_home', '.claude', '.claude.json');
    const { env, harness, runDir } = await startSleeping('claude', 'data-claude', '"tool_use"');
    expect(fs.readFileSync(state, 'utf8')).toContain(runDir);
    const engineKids = (await execa('pgrep', ['-P', String(harness.pid)], { reject: false })).stdout.split('\n').filter(Boolean).map(Number);
    // claude runs its shell in a session of its own: collect the engine's children before the harness dies.
    const shells = (await Promise.all(engineKids.map(async (pid) => (await execa('pgrep', ['-P', String(pid)], { reject: false })).stdout))).join('\n').split('\n').filter(Boolean).map(Number);
    harness.kill('SIGKILL');
    await harness;
    expect(fs.readFileSync(state, 'utf8')).toContain(runDir);
    // Orphans of the dead harness (containment's job once PID namespaces land): end them so the test leaves none.
    for (const pid of [...shells, ...engineKids]) {
      try { process.kill(-pid, 'SIGKILL'); } catch { try { process.kill(pid, 'SIGKILL'); } catch { /* gone */ } }
    }

    const listed = await execa('node', [BIN, 'runs', '--json'], { env, reject: false });
    expect(JSON.parse(listed.stdout)).toEqual([expect.objectContaining({ run_dir: runDir, attempts: 1, last_completion: 'failed' })]);
    expect(fs.readFileSync(state, 'utf8')).not.toContain(runDir);
    const meta = JSON.parse(fs.readFileSync(path.join(runDir, '.audit', 'meta.1.json'), 'utf8'));
    expect(meta).toMatchObject({ status: 'finished', completion: { state: 'failed', reason: 'HARNESS_INTERRUPTED' } });
    expect(meta.session_id).toEqual(expect.any(String));
  }, 300_000);
});
