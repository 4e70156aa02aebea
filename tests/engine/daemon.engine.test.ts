/**
 * The attempt daemon (AGENT_HARNESS_DAEMON=on) with the real codex CLI: commands given at once run their attempts
 * side by side in one daemon, each on its own model server (the one the previous attempt prepared, or its own), so
 * each attempt's model requests, and the verdict drawn from them, are its own. (The daemon's protocol, failures and
 * life are in tests/contract/daemon.contract.test.ts, on a fake engine.)
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { BIN } from '../helpers/cli.js';

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'ah-daemon-engine-'));
const project = path.join(tmp, 'project');
fs.mkdirSync(project);
fs.writeFileSync(path.join(project, 'package.json'), '{"name":"daemon-engine","private":true}\n');
const env: NodeJS.ProcessEnv = {
  PATH: process.env.PATH,
  HOME: path.join(tmp, 'home'),
  SKILL_RUNNER_DATA_DIR: path.join(tmp, 'data'),
  AGENT_HARNESS_SKILL_ROOTS: path.join(tmp, 'no-skills'),
  AGENT_HARNESS_DAEMON: 'on',
  AGENT_HARNESS_DAEMON_DIR: path.join(tmp, 'daemons'),
  AGENT_HARNESS_DAEMON_IDLE_MS: '60000',
  NO_COLOR: '1',
};
fs.mkdirSync(env.HOME!);

/** `agent-harness start --prompt <prompt> codex` through the daemon; resolves its exit status and stderr. */
function start(prompt: string): Promise<{ status: number | null; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [BIN, 'start', '--prompt', prompt, 'codex'], { cwd: project, env, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.once('exit', (status) => resolve({ status, stderr }));
  });
}

afterAll(async () => {
  await new Promise((resolve) => spawn(process.execPath, [BIN, 'daemon', 'stop'], { cwd: project, env, stdio: 'ignore' }).once('exit', resolve));
  fs.rmSync(tmp, { recursive: true, force: true });
}, 60_000);

describe('codex through the attempt daemon', () => {
  it('commands given at once run side by side in one daemon; each attempt\'s model requests are its own', async () => {
    const first = await start('zq-warm-up');
    expect(first.status, first.stderr).toBe(0);
    for (let round = 1; round <= 2; round += 1) {
      // Words no model request carries but the one it is the prompt of.
      const prompts = [1, 2, 3, 4].map((i) => `zq-prompt-${round}-${i}`);
      const runs = await Promise.all(prompts.map(start));
      const owners = new Set<number>();
      runs.forEach((run, i) => {
        expect(run.status, run.stderr).toBe(0);
        const runDir = /^run_dir: (.+)$/m.exec(run.stderr)![1]!;
        const meta = JSON.parse(fs.readFileSync(path.join(runDir, '.audit', 'meta.1.json'), 'utf8'));
        expect(meta).toMatchObject({ status: 'finished', completion: { state: 'awaiting_input' }, trust: { via: 'argv' } });
        owners.add(meta.owner.pid);
        const requests = fs.readFileSync(path.join(runDir, '.audit', 'model-requests.1.jsonl'), 'utf8');
        // Its own prompt reached its own model server, and nobody else's did.
        expect(requests).toContain(prompts[i]);
        for (const other of [...prompts.filter((p) => p !== prompts[i]), 'zq-warm-up']) expect(requests).not.toContain(other);
      });
      expect([...owners]).toHaveLength(1);
    }
  }, 300_000);
});
