/**
 * The real claude CLI (pinned @anthropic-ai/claude-code) against the scripted model server on 127.0.0.1
 * (Anthropic Messages), through `runAttempt`.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runAttempt } from '../../src/core/run-attempt.js';
import { isClaudeTrusted } from '../../src/engines/claude/config.js';
import { startModelServer, turns, type ModelScript, type ModelServer } from '../../src/model/index.js';
import { resolveHarnessPaths, type HarnessPaths } from '../../src/runtime/paths.js';
import { resolveRunSelector } from '../../src/runtime/run-store.js';
import { snapshotTree } from '../../src/runtime/fs-snapshot.js';
import { expectCompleteAudit } from '../helpers/audit.js';

const REPO = path.resolve(import.meta.dirname, '..', '..');
const FLAGS = ['--output-format', 'stream-json', '--verbose', '--dangerously-skip-permissions'];
let tmp: string;
let paths: HarnessPaths;
let hostHome: string;
let hostEnv: NodeJS.ProcessEnv;

beforeAll(() => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'ah-claude-engine-'));
  hostHome = path.join(tmp, 'host-home');
  fs.mkdirSync(path.join(hostHome, '.claude'), { recursive: true });
  fs.writeFileSync(path.join(hostHome, '.claude', 'settings.json'), '{"model":"host/must-not-be-used"}\n');
  hostEnv = { ...process.env, HOME: hostHome, ANTHROPIC_API_KEY: 'sk-ant-host-secret-must-not-leak' };
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

/** The parsed stdout events of an attempt. */
function stdoutEvents(file: string): Array<Record<string, any>> {
  return fs.readFileSync(file, 'utf8').split('\n').filter(Boolean).map((line) => JSON.parse(line));
}

describe('claude engine (real binary, scripted model)', () => {
  it('engine specifics across start and resume: argv, config, trust, env, skills offered, host HOME untouched', async () => {
    const hostBefore = await snapshotTree(hostHome, { exclude: [] });
    await withServer({
      version: 1,
      turns: [
        turns.shell("printf 'hello from agent-harness\\n' > hello.txt"),
        turns.final('Wrote hello.txt.'),
        turns.shell("printf 'again\\n' >> hello.txt"),
        turns.final('Appended to hello.txt.'),
      ],
    }, async (server) => {
      const first = await runAttempt({ paths, engine: 'claude', launch: 'start', prompt: 'Use the demo-hello skill.', modelServer: server, hostEnv, translateMode: 3 });
      expect(first.error).toBeNull();
      expect(first.completion).toEqual({ state: 'completed', reason: 'done_marker' });
      expect(first.attempt).toBe(1);
      const init = stdoutEvents(first.audit.stdout).find((e) => e.type === 'system' && e.subtype === 'init')!;
      expect(first.sessionId).toMatch(/^[0-9a-f-]{36}$/);
      expect(first.sessionId).toBe(init.session_id);
      expect(first.toolCalls).toHaveLength(1);
      expect(first.toolCalls[0]).toMatchObject({ kind: 'shell', name: 'Bash', exitCode: 0 });
      expect(first.finalMessage).toContain('Wrote hello.txt.');
      expect(first.fsDiff?.created).toContain('hello.txt');
      expect(fs.readFileSync(path.join(first.runDir, 'hello.txt'), 'utf8')).toBe('hello from agent-harness\n');
      const meta1 = expectCompleteAudit(first.audit);
      expect(meta1.command?.argv).toEqual(['-p', 'Use the demo-hello skill.', ...FLAGS]);
      expect(meta1.skill_injection.skills.map((s) => s.name)).toContain('demo-hello');
      const configDir = path.join(paths.agentHome, '.claude');
      expect(meta1.config_injection).toEqual({ engine: 'claude', config_path: configDir, profile: null });
      expect(meta1.trust).toMatchObject({ path: first.runDir, config_path: path.join(configDir, '.claude.json') });
      expect(meta1.trust?.removed_at).not.toBeNull();
      expect(await isClaudeTrusted(path.join(configDir, '.claude.json'), first.runDir)).toBe(false);
      expect(meta1.env).toMatchObject({ HOME: paths.agentHome, CLAUDE_CONFIG_DIR: configDir, ANTHROPIC_BASE_URL: server.url, CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1', IS_SANDBOX: '1' });
      expect(JSON.stringify(meta1.env)).not.toContain('sk-ant-host-secret-must-not-leak');

      // The injected skill is visible to the engine: in the init event and in the request's system message.
      expect(init.skills).toContain('demo-hello');
      const [firstRequest] = server.requests.filter((r) => r.wire === 'anthropic-messages');
      expect(firstRequest?.path).toBe('/v1/messages');
      const body = firstRequest?.body as { messages: Array<{ role: string; content: unknown }>; tools: Array<{ name: string }> };
      expect(JSON.stringify(body.messages.filter((m) => m.role === 'system'))).toContain('demo-hello');
      expect(body.tools.map((t) => t.name)).toEqual(expect.arrayContaining(['Bash', 'Skill']));
      expect(server.egress).toEqual([]);

      const run = await resolveRunSelector(paths.runRoot, first.handle);
      expect(run.run_dir).toBe(first.runDir);
      const second = await runAttempt({ paths, engine: run.engine, launch: 'resume', run, message: 'Append another line.', modelServer: server, hostEnv });
      expect(second.error).toBeNull();
      expect(second.runDir).toBe(first.runDir);
      expect(second.attempt).toBe(2);
      expect(second.sessionId).toBe(first.sessionId);
      expect(second.completion).toEqual({ state: 'completed', reason: 'done_marker' });
      expect(second.fsDiff?.modified).toContain('hello.txt');
      expect(fs.readFileSync(path.join(first.runDir, 'hello.txt'), 'utf8')).toBe('hello from agent-harness\nagain\n');
      const meta2 = expectCompleteAudit(second.audit);
      expect(meta2.command?.argv).toEqual(['-p', '--resume', first.sessionId, 'Append another line.', ...FLAGS]);
      expect(second.fcmp[0]!.seq).toBeGreaterThan(first.fcmp.at(-1)!.seq);
      expect(JSON.parse(fs.readFileSync(first.audit.meta, 'utf8')).attempt).toBe(1);
      expect(server.egress).toEqual([]);
    });
    const hostAfter = await snapshotTree(hostHome, { exclude: [] });
    expect(hostAfter.entries).toEqual(hostBefore.entries);
  });

  it('fails the attempt on a model error (no retries in scripted mode) and still writes every audit file', async () => {
    await withServer({ version: 1, turns: [turns.error(401, 'scripted bad key')] }, async (server) => {
      const result = await runAttempt({ paths, engine: 'claude', launch: 'start', prompt: 'hi', modelServer: server, hostEnv, timeoutMs: 120_000 });
      expect(result.completion.state).toBe('failed');
      expect(result.fcmp.at(-1)?.type).toBe('conversation.failed');
      expect(result.fcmp.at(-1)?.data).toMatchObject({ category: 'auth', code: 'ENGINE_AUTH_FAILED' });
      const meta = expectCompleteAudit(result.audit);
      expect(meta.completion?.state).toBe('failed');
      expect(meta.exit).not.toBeNull();
      expect(fs.statSync(result.audit.stdout).size).toBeGreaterThan(0);
      // CLAUDE_CODE_MAX_RETRIES=0: one request, not claude's default 10 retries with backoff.
      expect(server.requests.filter((r) => r.wire === 'anthropic-messages')).toHaveLength(1);
      expect(server.egress).toEqual([]);
    });
  });

});
