/**
 * The real codex CLI (pinned @openai/codex) against the scripted model server on 127.0.0.1.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runAttempt } from '../../src/core/run-attempt.js';
import { startModelServer, turns, type ModelScript, type ModelServer } from '../../src/model/index.js';
import { resolveHarnessPaths, type HarnessPaths } from '../../src/runtime/paths.js';
import { resolveRunSelector } from '../../src/runtime/run-store.js';
import { snapshotTree } from '../../src/runtime/fs-snapshot.js';
import { expectCompleteAudit } from '../helpers/audit.js';

const REPO = path.resolve(import.meta.dirname, '..', '..');
let tmp: string;
let paths: HarnessPaths;
let hostHome: string;
let hostEnv: NodeJS.ProcessEnv;

beforeAll(() => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'ah-codex-engine-'));
  hostHome = path.join(tmp, 'host-home');
  fs.mkdirSync(path.join(hostHome, '.config'), { recursive: true });
  fs.writeFileSync(path.join(hostHome, '.config', 'marker'), 'host config\n');
  // The harness process sees a fake host HOME so we can prove the engine never touches it.
  hostEnv = { ...process.env, HOME: hostHome, OPENAI_API_KEY: 'sk-host-secret-must-not-leak' };
  paths = resolveHarnessPaths({ env: {}, projectRoot: tmp, skillRoots: [path.join(REPO, 'fixtures', 'skills')] });
});

afterAll(() => {
  fs.rmSync(tmp, { recursive: true, force: true });
});

/** Names in the real HOME and the mtime of its `.codex` (engine config a leak would create or touch). */
function realHomeState(): { names: string[]; codexMtime: number | null } {
  const home = os.homedir();
  const names = fs.existsSync(home) ? fs.readdirSync(home).sort() : [];
  const codex = path.join(home, '.codex');
  return { names, codexMtime: fs.existsSync(codex) ? fs.statSync(codex).mtimeMs : null };
}

async function withServer<T>(script: ModelScript, fn: (server: ModelServer) => Promise<T>): Promise<T> {
  const server = await startModelServer({ script });
  try {
    return await fn(server);
  } finally {
    await server.close();
  }
}

describe('codex engine (real binary, scripted model)', () => {
  it('starts, runs a shell tool call, completes with the done marker, then resumes by handle in the same run', async () => {
    const hostBefore = await snapshotTree(hostHome, { exclude: [] });
    const realHomeBefore = realHomeState();
    await withServer({
      version: 1,
      turns: [
        turns.shell("printf 'hello from agent-harness\\n' > hello.txt"),
        turns.final('Wrote hello.txt.', { done: true }),
        turns.shell("printf 'again\\n' >> hello.txt"),
        turns.final('Appended to hello.txt.', { done: true }),
      ],
    }, async (server) => {
      const first = await runAttempt({ paths, engine: 'codex', launch: 'start', prompt: 'Use the demo-hello skill.', modelServer: server, hostEnv, translateMode: 3 });
      expect(first.error).toBeNull();
      expect(first.completion).toEqual({ state: 'completed', reason: 'done_marker' });
      expect(first.sessionId).toMatch(/^[0-9a-f-]{36}$/);
      expect(first.attempt).toBe(1);
      expect(first.toolCalls).toHaveLength(1);
      expect(first.toolCalls[0]).toMatchObject({ kind: 'shell', exitCode: 0 });
      expect(first.finalMessage).toContain('Wrote hello.txt.');
      expect(first.fsDiff?.created).toContain('hello.txt');
      expect(fs.readFileSync(path.join(first.runDir, 'hello.txt'), 'utf8')).toBe('hello from agent-harness\n');
      const meta1 = expectCompleteAudit(first.audit);
      expect(meta1.skill_injection.skill_count).toBeGreaterThanOrEqual(1);
      expect(meta1.skill_injection.skills.map((s) => s.name)).toContain('demo-hello');
      expect(meta1.config_injection).toMatchObject({ engine: 'codex', profile: 'agent-harness' });
      expect(meta1.trust?.removed_at).not.toBeNull();
      expect(JSON.stringify(meta1.env)).not.toContain('sk-host-secret-must-not-leak');
      expect(meta1.env.HOME).toBe(paths.agentHome);

      // The injected skill reached the model: codex lists skills in a developer message of its request.
      const firstRequest = server.requests.find((r) => r.wire === 'openai-responses');
      expect(JSON.stringify(firstRequest?.body)).toContain('demo-hello');
      expect(server.egress).toEqual([]);

      // Resume by handle: attempt 2 in the same run dir, same thread id.
      const run = await resolveRunSelector(paths.runRoot, first.handle);
      const second = await runAttempt({ paths, engine: run.engine, launch: 'resume', run, message: 'Append another line.', modelServer: server, hostEnv });
      expect(second.error).toBeNull();
      expect(second.runDir).toBe(first.runDir);
      expect(second.attempt).toBe(2);
      expect(second.sessionId).toBe(first.sessionId);
      expect(second.completion.state).toBe('completed');
      expect(second.fsDiff?.modified).toContain('hello.txt');
      expect(fs.readFileSync(path.join(first.runDir, 'hello.txt'), 'utf8')).toBe('hello from agent-harness\nagain\n');
      expectCompleteAudit(second.audit);
      expect(second.fcmp[0]!.seq).toBeGreaterThan(first.fcmp.at(-1)!.seq);
      expect(second.fcmp.some((e) => e.type === 'user.input.replied')).toBe(true);
      // Attempt 1's files are untouched by attempt 2.
      expect(fs.existsSync(path.join(first.runDir, '.audit', 'meta.1.json'))).toBe(true);
      expect(JSON.parse(fs.readFileSync(first.audit.meta, 'utf8')).attempt).toBe(1);
    });
    // Nothing of the fake host HOME changed, and the real one got no engine config.
    const hostAfter = await snapshotTree(hostHome, { exclude: [] });
    expect(hostAfter.entries).toEqual(hostBefore.entries);
    expect(realHomeState()).toEqual(realHomeBefore);
  });

  it('waits for input when the turn ends without the done marker', async () => {
    await withServer({ version: 1, turns: [turns.text('Which file should I write?')] }, async (server) => {
      const result = await runAttempt({ paths, engine: 'codex', launch: 'start', prompt: 'do something', modelServer: server, hostEnv });
      expect(result.completion).toEqual({ state: 'awaiting_input', reason: 'turn_end_without_done_marker' });
      expect(result.fcmp.at(-1)?.type).toBe('user.input.required');
      expectCompleteAudit(result.audit);
    });
  });

  it('fails the attempt on a model error and still writes every audit file', async () => {
    await withServer({ version: 1, turns: [turns.error(500, 'scripted upstream failure')] }, async (server) => {
      const result = await runAttempt({ paths, engine: 'codex', launch: 'start', prompt: 'hi', modelServer: server, hostEnv, timeoutMs: 120_000 });
      expect(result.completion.state).toBe('failed');
      expect(result.fcmp.at(-1)?.type).toBe('conversation.failed');
      const meta = expectCompleteAudit(result.audit);
      expect(meta.completion?.state).toBe('failed');
      expect(meta.exit).not.toBeNull();
      expect(fs.statSync(result.audit.stdout).size).toBeGreaterThan(0);
    });
  });
});
