/**
 * The real gemini CLI (pinned @google/gemini-cli 0.61.0) against the scripted model server on 127.0.0.1
 * (Gemini API), through runAttempt.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runAttempt } from '../../src/core/run-attempt.js';
import { geminiConfigPaths, geminiSettingsPath, isGeminiTrusted } from '../../src/engines/gemini/config.js';
import { startModelServer, turns, type ModelScript, type ModelServer } from '../../src/model/index.js';
import { resolveHarnessPaths, type HarnessPaths } from '../../src/runtime/paths.js';
import { resolveRunSelector } from '../../src/runtime/run-store.js';
import { snapshotTree } from '../../src/runtime/fs-snapshot.js';
import { expectCompleteAudit } from '../helpers/audit.js';

const REPO = path.resolve(import.meta.dirname, '..', '..');
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
let tmp: string;
let paths: HarnessPaths;
let hostHome: string;
let hostEnv: NodeJS.ProcessEnv;

beforeAll(() => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'ah-gemini-engine-'));
  hostHome = path.join(tmp, 'host-home');
  fs.mkdirSync(path.join(hostHome, '.gemini'), { recursive: true });
  fs.writeFileSync(path.join(hostHome, '.gemini', 'settings.json'), '{"model":{"name":"host/must-not-be-used"}}\n');
  hostEnv = { ...process.env, HOME: hostHome, GEMINI_API_KEY: 'host-secret-must-not-leak', GOOGLE_API_KEY: 'host-secret-must-not-leak' };
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

/** The names offered to the model in `activate_skill`'s enum of the first request. */
function offeredSkills(server: ModelServer): string[] {
  const body = server.requests.find((r) => r.wire === 'gemini' && r.response_kind !== 'side')?.body as { tools?: Array<{ functionDeclarations?: Array<{ name: string; parametersJsonSchema?: { properties?: { name?: { enum?: string[] } } } }> }> };
  const decl = body.tools?.flatMap((t) => t.functionDeclarations ?? []).find((d) => d.name === 'activate_skill');
  return decl?.parametersJsonSchema?.properties?.name?.enum ?? [];
}

describe('gemini engine (real binary, scripted model)', () => {
  it('engine specifics across start and resume: argv, config, trust, env, skills offered, host HOME untouched', async () => {
    const hostBefore = await snapshotTree(hostHome, { exclude: [] });
    const { trustPath } = geminiConfigPaths(paths.agentHome);
    await withServer({
      version: 1,
      turns: [
        turns.shell("printf 'hello from agent-harness\\n' > hello.txt"),
        turns.final('Wrote hello.txt.', { done: true }),
        turns.shell("printf 'again\\n' >> hello.txt"),
        turns.final('Appended to hello.txt.', { done: true }),
      ],
    }, async (server) => {
      const first = await runAttempt({ paths, engine: 'gemini', launch: 'start', prompt: 'Use the demo-hello skill.', modelServer: server, hostEnv, translateMode: 3 });
      expect(first.error).toBeNull();
      expect(first.completion).toEqual({ state: 'completed', reason: 'done_marker' });
      expect(first.sessionId).toMatch(UUID);
      expect(first.toolCalls).toHaveLength(1);
      expect(first.toolCalls[0]).toMatchObject({ kind: 'shell', name: 'run_shell_command', status: 'completed' });
      expect(first.finalMessage).toContain('Wrote hello.txt.');
      expect(first.fsDiff?.created).toContain('hello.txt');
      expect(fs.readFileSync(path.join(first.runDir, 'hello.txt'), 'utf8')).toBe('hello from agent-harness\n');
      const meta1 = expectCompleteAudit(first.audit);
      expect(meta1.skill_injection.skills.map((s) => s.name)).toContain('demo-hello');
      // Decision 11: the enforced settings live in the run directory; the shared managed HOME has none.
      const settingsPath = geminiSettingsPath(first.runDir);
      expect(meta1.config_injection).toMatchObject({ engine: 'gemini', config_path: settingsPath });
      expect(fs.existsSync(path.join(paths.agentHome, '.gemini', 'settings.json'))).toBe(false);
      expect(meta1.command?.argv).toEqual(['-p', 'Use the demo-hello skill.', '--output-format', 'stream-json', '--yolo']);
      expect(JSON.stringify(meta1.env)).not.toContain('host-secret-must-not-leak');
      expect(meta1.env.HOME).toBe(paths.agentHome);

      // Trust: registered for the attempt, removed after it.
      expect(meta1.trust).toMatchObject({ path: first.runDir, config_path: trustPath });
      expect(meta1.trust?.removed_at).not.toBeNull();
      expect(await isGeminiTrusted(trustPath, first.runDir)).toBe(false);
      expect(JSON.parse(fs.readFileSync(settingsPath, 'utf8'))).toMatchObject({ security: { auth: { selectedType: 'gemini-api-key' } }, telemetry: { enabled: false } });

      // The injected skill reached the model: gemini offers it in activate_skill's enum (and its description).
      expect(offeredSkills(server)).toContain('demo-hello');
      expect(server.requests.every((r) => r.wire === 'gemini')).toBe(true);
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
      expect(meta2.command?.argv).toEqual(['--resume', first.sessionId, '-p', 'Append another line.', '--output-format', 'stream-json', '--yolo']);
      expect(second.fcmp[0]!.seq).toBeGreaterThan(first.fcmp.at(-1)!.seq);
      expect(await isGeminiTrusted(trustPath, first.runDir)).toBe(false);
      expect(server.egress).toEqual([]);
    });
    const hostAfter = await snapshotTree(hostHome, { exclude: [] });
    expect(hostAfter.entries).toEqual(hostBefore.entries);
  });

  it('answers the model-router side request of `-m auto` outside the script', async () => {
    await withServer({ version: 1, turns: [turns.writeFile('a.txt', 'x'), turns.final('Wrote a.txt.')] }, async (server) => {
      const passthrough = ['-p', 'write a.txt', '--output-format', 'stream-json', '--yolo', '-m', 'auto'];
      const result = await runAttempt({ paths, engine: 'gemini', launch: 'start', passthrough, modelServer: server, hostEnv });
      expect(result.completion).toEqual({ state: 'completed', reason: 'done_marker' });
      const side = server.requests.filter((r) => JSON.stringify(r.body).includes('responseJsonSchema'));
      expect(side.length).toBeGreaterThan(0);
      expect(side.every((r) => r.status === 200 && r.response_kind === 'side' && r.turn_index === null)).toBe(true);
      // The router accepted the answer (a complexity_score below 1 makes it log a ZodError and fall back).
      expect(fs.readFileSync(result.audit.stderr, 'utf8')).not.toContain('NumericalClassifierStrategy failed');
      expect(fs.readFileSync(path.join(result.runDir, 'a.txt'), 'utf8')).toBe('x');
      expect(server.egress).toEqual([]);
    });
  });
});
