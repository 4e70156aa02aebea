/**
 * The real opencode CLI (pinned opencode-ai) against the scripted model server on 127.0.0.1 (OpenAI Chat).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runAttempt } from '../../src/core/run-attempt.js';
import { CHAT_SIDE_TITLE, startModelServer, turns, type ModelScript, type ModelServer } from '../../src/model/index.js';
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
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'ah-opencode-engine-'));
  hostHome = path.join(tmp, 'host-home');
  fs.mkdirSync(path.join(hostHome, '.config', 'opencode'), { recursive: true });
  fs.writeFileSync(path.join(hostHome, '.config', 'opencode', 'opencode.json'), '{"model":"host/must-not-be-used"}\n');
  hostEnv = { ...process.env, HOME: hostHome, OPENAI_API_KEY: 'sk-host-secret-must-not-leak' };
  paths = resolveHarnessPaths({ env: {}, projectRoot: tmp, skillRoots: [path.join(REPO, 'fixtures', 'skills')] });
});

afterAll(() => {
  fs.rmSync(tmp, { recursive: true, force: true });
});

async function withServer<T>(script: ModelScript, fn: (server: ModelServer) => Promise<T>): Promise<T> {
  const server = await startModelServer({ script });
  try {
    return await fn(server);
  } finally {
    await server.close();
  }
}

/** The agent's model requests (not the title side request). */
function agentRequests(server: ModelServer): ModelServer['requests'] {
  return server.requests.filter((r) => r.wire === 'openai-chat' && !JSON.stringify(r.body).includes('You are a title generator'));
}

describe('opencode engine (real binary, scripted model)', () => {
  it('engine specifics across start and resume: argv, config, trust, env, skills offered, host HOME untouched', async () => {
    const hostBefore = await snapshotTree(hostHome, { exclude: [] });
    await withServer({
      version: 1,
      turns: [
        turns.shell("printf 'hello from agent-harness\\n' > hello.txt"),
        turns.final('Wrote hello.txt.', { done: true }),
        turns.shell("printf 'again\\n' >> hello.txt"),
        turns.final('Appended to hello.txt.', { done: true }),
      ],
    }, async (server) => {
      const first = await runAttempt({ paths, engine: 'opencode', launch: 'start', prompt: 'Use the demo-hello skill.', modelServer: server, hostEnv, translateMode: 3 });
      expect(first.error).toBeNull();
      expect(first.completion).toEqual({ state: 'completed', reason: 'done_marker' });
      expect(first.sessionId).toMatch(/^ses_[A-Za-z0-9]+$/);
      expect(first.toolCalls).toHaveLength(1);
      expect(first.toolCalls[0]).toMatchObject({ kind: 'shell', exitCode: 0 });
      expect(first.finalMessage).toContain('Wrote hello.txt.');
      expect(first.fsDiff?.created).toContain('hello.txt');
      expect(fs.readFileSync(path.join(first.runDir, 'hello.txt'), 'utf8')).toBe('hello from agent-harness\n');
      const meta1 = expectCompleteAudit(first.audit);
      expect(meta1.skill_injection.skills.map((s) => s.name)).toContain('demo-hello');
      expect(meta1.config_injection).toMatchObject({ engine: 'opencode', config_path: path.join(paths.agentHome, '.config', 'opencode', 'opencode.json') });
      expect(meta1.trust).toBeNull();
      expect(JSON.stringify(meta1.env)).not.toContain('sk-host-secret-must-not-leak');
      expect(meta1.env.HOME).toBe(paths.agentHome);
      expect(meta1.command?.argv).toEqual(['run', '--format', 'json', '-m', 'agent-harness/scripted', 'Use the demo-hello skill.']);

      // The injected skill reached the model: opencode lists skills (name, description, SKILL.md location) in
      // `<available_skills>` of the system prompt of every request, and offers the `skill` tool to load one.
      const [firstRequest] = agentRequests(server);
      const body = firstRequest?.body as { messages: Array<{ role: string; content: unknown }>; tools: Array<{ function: { name: string } }> };
      const system = JSON.stringify(body.messages.filter((m) => m.role === 'system'));
      expect(system).toContain('<name>demo-hello</name>');
      expect(system).toContain(path.join(first.runDir, '.opencode', 'skills', 'demo-hello', 'SKILL.md'));
      expect(body.tools.map((t) => t.function.name)).toEqual(expect.arrayContaining(['bash', 'skill']));
      // The title side request was answered without using a script turn.
      const title = server.requests.find((r) => JSON.stringify(r.body).includes('You are a title generator'));
      expect(title).toMatchObject({ response_kind: 'side', side_kind: 'title', turn_index: null, status: 200 });
      expect(CHAT_SIDE_TITLE).toBeTruthy();
      expect(server.egress).toEqual([]);

      const run = await resolveRunSelector(paths.runRoot, first.handle);
      const second = await runAttempt({ paths, engine: run.engine, launch: 'resume', run, message: 'Append another line.', modelServer: server, hostEnv });
      expect(second.error).toBeNull();
      expect(second.runDir).toBe(first.runDir);
      expect(second.attempt).toBe(2);
      expect(second.sessionId).toBe(first.sessionId);
      expect(second.completion.state).toBe('completed');
      expect(second.fsDiff?.modified).toContain('hello.txt');
      expect(fs.readFileSync(path.join(first.runDir, 'hello.txt'), 'utf8')).toBe('hello from agent-harness\nagain\n');
      const meta2 = expectCompleteAudit(second.audit);
      expect(meta2.command?.argv).toEqual(['run', '--format', 'json', '--session', first.sessionId, 'Append another line.']);
      expect(second.fcmp[0]!.seq).toBeGreaterThan(first.fcmp.at(-1)!.seq);
      expect(server.egress).toEqual([]);
    });
    const hostAfter = await snapshotTree(hostHome, { exclude: [] });
    expect(hostAfter.entries).toEqual(hostBefore.entries);
  });

  it('fails the attempt on a model error and still writes every audit file', async () => {
    // 401 is not retried by opencode; a 500 is retried with backoff for about a minute before the error event.
    await withServer({ version: 1, turns: [turns.error(401, 'scripted bad key')] }, async (server) => {
      const result = await runAttempt({ paths, engine: 'opencode', launch: 'start', prompt: 'hi', modelServer: server, hostEnv, timeoutMs: 120_000 });
      expect(result.completion.state).toBe('failed');
      expect(result.fcmp.at(-1)?.type).toBe('conversation.failed');
      expect(result.fcmp.at(-1)?.data).toMatchObject({ category: 'auth', code: 'ENGINE_AUTH_FAILED' });
      const meta = expectCompleteAudit(result.audit);
      expect(meta.completion?.state).toBe('failed');
      expect(meta.exit).not.toBeNull();
      expect(fs.statSync(result.audit.stdout).size).toBeGreaterThan(0);
      expect(server.egress).toEqual([]);
    });
  });
});
