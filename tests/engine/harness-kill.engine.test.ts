/**
 * kill -9 of `agent-harness start` mid-attempt (the agent's shell sits in a 10-minute sleep) with the real codex and claude
 * CLIs: the attempt is sealed by the next command and resumed. codex, non-interactive, gets its trust on its command
 * line, so a dead harness leaves nothing in its `config.toml`; the trust entry the dead harness leased in claude's
 * `.claude.json` is reclaimed by the next command.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { runHome } from '../../src/runtime/paths.js';
import { execa } from 'execa';
import { afterAll, describe, expect, it } from 'vitest';
import { sealAttemptIfOrphaned } from '../../src/core/seal-interrupted.js';
import { foregroundSleep, pidsWithMarker, uniqueSleepSeconds } from '../helpers/processes.js';
import { scaled, waitUntil } from '../helpers/load-scaled.js';

const BIN = path.resolve('bin/agent-harness.js');
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'ah-kill-'));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

function writeScript(name: string, turns: unknown[]): string {
  const file = path.join(tmp, name);
  fs.writeFileSync(file, JSON.stringify({ version: 1, turns }));
  return file;
}

/**
 * Starts `agent-harness start --script <a long sleep, then done> --prompt go <engine>` with its data under `dataDir`, and
 * resolves once the agent's shell call shows in the output (`marker`), with the run dir it printed.
 */
async function startSleeping(engine: string, dataDir: string, marker: string) {
  const env = { ...process.env, SKILL_RUNNER_DATA_DIR: path.join(tmp, dataDir) };
  const seconds = uniqueSleepSeconds();
  const sleep = `sleep ${seconds}`;
  const slow = writeScript(`slow-${engine}.json`, [
    { type: 'shell', command: foregroundSleep(seconds) },
    { type: 'final', text: 'done', done: true },
  ]);
  const state = { out: '' };
  const harness = execa('node', [BIN, 'start', '--script', slow, '--prompt', 'go', engine], {
    env,
    reject: false,
    all: true,
  });
  harness.all!.on('data', (chunk: Buffer) => (state.out += chunk.toString()));
  await waitFor(() => state.out.includes(marker), 'the agent shell call');
  await waitFor(() => pidsWithMarker(sleep).length > 0, "the agent's sleep");
  return { env, harness, sleep, runDir: /^run_dir: (.+)$/m.exec(state.out)![1]! };
}

/** True when no process has the pid any more. */
function isGone(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return false;
  } catch {
    return true;
  }
}

/** Polls `check` (no fixed sleep as synchronization: it returns as soon as the condition holds), load-scaled. */
async function waitFor(check: () => boolean, what: string, limitMs = 120_000): Promise<void> {
  if (!(await waitUntil(check, limitMs, 200))) throw new Error(`timed out waiting for ${what}`);
}

describe('harness killed mid-attempt (codex)', () => {
  it(
    'after kill -9, translate seals the attempt (failed HARNESS_INTERRUPTED, session recovered), resume continues it, no trust entry anywhere',
    async () => {
      const { env, harness, sleep, runDir } = await startSleeping('codex', 'data', 'command_execution');
      // The run's own HOME (docs/isolation.md): under the managed home, named by the run id.
      const agentHome = path.join(tmp, 'data', 'agent_cache', 'agent_home');
      const home = runHome({ agentHome }, path.basename(runDir)).home;
      const config = path.join(home, '.codex', 'config.toml');
      // Trusted on codex's command line for this process: nothing in config.toml, no lease to reclaim if it dies.
      expect(fs.readFileSync(config, 'utf8')).not.toContain(runDir);
      expect(fs.existsSync(path.join(home, 'leases')) ? fs.readdirSync(path.join(home, 'leases')) : []).toEqual([]);
      const running = JSON.parse(fs.readFileSync(path.join(runDir, '.audit', 'meta.1.json'), 'utf8'));
      expect(running.trust).toMatchObject({ path: runDir, via: 'argv' });
      expect(running.command.argv).toContain(`projects={${JSON.stringify(runDir)}={trust_level="trusted"}}`);

      // The owner is alive: sealing must leave the running attempt alone.
      expect(await sealAttemptIfOrphaned(runDir, 1)).toBeNull();

      const engineKids = (await execa('pgrep', ['-P', String(harness.pid)], { reject: false })).stdout
        .split('\n')
        .filter(Boolean)
        .map(Number);
      expect(engineKids.length).toBeGreaterThan(0);
      harness.kill('SIGKILL');
      await harness;
      // The engine's PID namespace ends with the harness (its init's lifeline closed): the engine and the agent's
      // sleep go by themselves, so codex's thread lock is free for the resume below.
      await waitFor(
        () => engineKids.every(isGone) && pidsWithMarker(sleep).length === 0,
        "the dead harness's engine and its sleep to end",
        60_000,
      );
      // The dead harness had nothing to clean up.
      expect(fs.readFileSync(config, 'utf8')).not.toContain(runDir);

      // `runs` seals the orphaned attempt from its raw logs and lists it as failed.
      const listed = await execa('node', [BIN, 'runs', '--json'], { env, reject: false });
      expect(JSON.parse(listed.stdout)).toEqual([
        expect.objectContaining({ run_dir: runDir, attempts: 1, last_completion: 'failed' }),
      ]);
      const threadId = /"thread_id":"([^"]+)"/.exec(
        fs.readFileSync(path.join(runDir, '.audit', 'stdout.1.log'), 'utf8'),
      )![1];
      const translated = await execa('node', [BIN, 'translate', runDir, '--summary'], { env, reject: false });
      expect(translated.stderr).toBe('');
      expect(JSON.parse(translated.stdout)).toMatchObject({ engine: 'codex', session_id: threadId });
      const meta = JSON.parse(fs.readFileSync(path.join(runDir, '.audit', 'meta.1.json'), 'utf8'));
      expect(meta).toMatchObject({
        status: 'finished',
        completion: { state: 'failed', reason: 'HARNESS_INTERRUPTED' },
        error: { code: 'HARNESS_INTERRUPTED' },
        session_id: threadId,
      });
      expect(fs.readFileSync(path.join(runDir, '.audit', 'fcmp.1.jsonl'), 'utf8').trim().length).toBeGreaterThan(0);
      const record = JSON.parse(fs.readFileSync(path.join(runDir, '.audit', 'run.json'), 'utf8'));
      expect(record).toMatchObject({ attempts: 1, session_id: threadId, last_completion: 'failed' });
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
      expect(fs.existsSync(path.join(home, 'leases')) ? fs.readdirSync(path.join(home, 'leases')) : []).toEqual([]);
    },
    scaled(300_000),
  );
});

describe('harness killed mid-attempt (claude)', () => {
  it(
    'the .claude.json trust entry of the dead run is reclaimed by `runs`, and the attempt is sealed',
    async () => {
      const { env, harness, sleep, runDir } = await startSleeping('claude', 'data-claude', '"tool_use"');
      const agentHome = path.join(tmp, 'data-claude', 'agent_cache', 'agent_home');
      const state = path.join(runHome({ agentHome }, path.basename(runDir)).home, '.claude', '.claude.json');
      expect(fs.readFileSync(state, 'utf8')).toContain(runDir);
      const engineKids = (await execa('pgrep', ['-P', String(harness.pid)], { reject: false })).stdout
        .split('\n')
        .filter(Boolean)
        .map(Number);
      harness.kill('SIGKILL');
      await harness;
      expect(fs.readFileSync(state, 'utf8')).toContain(runDir);
      // claude runs its shell in a session of its own; the PID namespace ends it with the harness all the same.
      await waitFor(
        () => engineKids.every(isGone) && pidsWithMarker(sleep).length === 0,
        "the dead harness's engine and its sleep to end",
        60_000,
      );

      const listed = await execa('node', [BIN, 'runs', '--json'], { env, reject: false });
      expect(JSON.parse(listed.stdout)).toEqual([
        expect.objectContaining({ run_dir: runDir, attempts: 1, last_completion: 'failed' }),
      ]);
      expect(fs.readFileSync(state, 'utf8')).not.toContain(runDir);
      const meta = JSON.parse(fs.readFileSync(path.join(runDir, '.audit', 'meta.1.json'), 'utf8'));
      expect(meta).toMatchObject({
        status: 'finished',
        completion: { state: 'failed', reason: 'HARNESS_INTERRUPTED' },
      });
      expect(meta.session_id).toEqual(expect.any(String));
    },
    scaled(300_000),
  );
});
