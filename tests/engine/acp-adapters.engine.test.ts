/**
 * claude and codex over the Agent Client Protocol through their pinned adapters (`@zed-industries/claude-agent-acp`,
 * `@zed-industries/codex-acp`), driven by a client built with `@agentclientprotocol/sdk`, against the scripted model.
 * The engine is prepared as an attempt prepares it (its `prepare` into a managed home, the engine env), and the
 * adapter's command (`acp.command`) runs in the attempt's namespaces (its own network: only the scripted model's port
 * is forwarded, nothing else is reachable). No provider transport is involved: this is the adapter contract alone.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Readable, Writable } from 'node:stream';
import {
  client,
  ndJsonStream,
  PROTOCOL_VERSION,
  type ClientConnection,
  type InitializeResponse,
  type RequestPermissionRequest,
  type SessionNotification,
} from '@agentclientprotocol/sdk';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { CLAUDE_VERSION } from '../../src/engines/claude/index.js';
import type { PreparedEngine } from '../../src/engines/engine.js';
import { loadEngine } from '../../src/engines/registry.js';
import { parseModelScript, startModelServer, type ModelServer } from '../../src/model/index.js';
import { buildEngineEnv } from '../../src/runtime/env.js';
import { resolveExecutable } from '../../src/runtime/executables.js';
import { openIsolation, type AttemptIsolation } from '../../src/runtime/isolation/attempt-isolation.js';
import { probeNamespaces } from '../../src/runtime/isolation/probe.js';
import { resolveHarnessPaths } from '../../src/runtime/paths.js';
import { missingReasons } from '../helpers/engines.js';
import { eventually, pidsWithMarker, uniqueSleepSeconds } from '../helpers/processes.js';

const ENGINES = ['claude', 'codex'] as const;
type AdapterEngine = (typeof ENGINES)[number];
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'ah-acp-adapters-'));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));
const MISSING = await missingReasons();
const NAMESPACES = probeNamespaces();

/** How the client answers `session/request_permission`: the option of this kind. */
type PermissionAnswer = 'allow_once' | 'reject_once';

/** The engine prepared once per test (a managed home, a run dir), as an attempt prepares it. */
interface PreparedAdapter {
  engine: AdapterEngine;
  server: ModelServer;
  runDir: string;
  prepared: PreparedEngine;
  command: { file: string; args: string[]; env: Record<string, string> };
  /** Puts the engine's config back and stops the model server. */
  dispose(): Promise<void>;
}

/** One adapter process with an SDK client connected to it. */
interface AdapterSession {
  child: ChildProcess;
  connection: ClientConnection;
  init: InitializeResponse;
  updates: SessionNotification[];
  permissions: RequestPermissionRequest[];
  stderr: () => string;
  /** Closes stdin, waits for the adapter and its namespaces to end (killing them when they do not), closes them. */
  close(): Promise<void>;
}

async function prepareAdapter(engine: AdapterEngine, name: string, turns: unknown[]): Promise<PreparedAdapter> {
  const dir = fs.mkdtempSync(path.join(tmp, `${engine}-${name}-`));
  const server = await startModelServer({ script: parseModelScript({ version: 1, turns }) });
  const paths = resolveHarnessPaths({
    env: { SKILL_RUNNER_DATA_DIR: path.join(dir, 'data') },
    projectRoot: process.cwd(),
    skillRoots: [],
  });
  const runDir = path.join(dir, 'run');
  for (const made of [runDir, paths.agentHome, paths.tmpDir]) fs.mkdirSync(made, { recursive: true });
  const adapter = await loadEngine(engine);
  const executable = resolveExecutable(adapter.executableName, paths);
  const prepared = await adapter.prepare({
    runDir,
    agentHome: paths.agentHome,
    modelMode: 'scripted',
    modelBaseUrl: server.url,
    profile: paths.codexProfile,
    interactive: false,
  });
  const env = buildEngineEnv({
    paths,
    modelMode: 'scripted',
    modelBaseUrl: server.url,
    liveEnvKeys: adapter.liveEnvKeys,
    engineEnv: prepared.env,
  });
  const command = adapter.acp!.command({
    executable,
    prepared,
    runDir,
    agentHome: paths.agentHome,
    modelBaseUrl: server.url,
  });
  return {
    engine,
    server,
    runDir,
    prepared,
    command: { ...command, env: { ...env, ...command.env } },
    async dispose() {
      await prepared.cleanup();
      await server.close();
    },
  };
}

/** Starts the adapter in the attempt's namespaces and initializes it (no fs or terminal capability advertised). */
async function startAdapter(ready: PreparedAdapter, answer: PermissionAnswer): Promise<AdapterSession> {
  const isolation: AttemptIsolation = await openIsolation({ mode: 'require', modelUrl: ready.server.url });
  const wrapped = isolation.wrap({ ...ready.command, cwd: ready.runDir });
  const child = spawn(wrapped.file, wrapped.args, {
    env: wrapped.env,
    cwd: ready.runDir,
    stdio: ['pipe', 'pipe', 'pipe'],
    detached: true,
  });
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()));
  const updates: SessionNotification[] = [];
  const permissions: RequestPermissionRequest[] = [];
  const connection = client({ name: 'acp-adapters test' })
    .onNotification('session/update', ({ params }) => {
      updates.push(params);
    })
    .onRequest('session/request_permission', async ({ params }) => {
      permissions.push(params);
      const option = params.options.find((o) => o.kind === answer);
      if (!option) return { outcome: { outcome: 'cancelled' } };
      return { outcome: { outcome: 'selected', optionId: option.optionId } };
    })
    .connect(
      ndJsonStream(
        Writable.toWeb(child.stdin!) as WritableStream<Uint8Array>,
        Readable.toWeb(child.stdout!) as ReadableStream<Uint8Array>,
      ),
    );
  const init = await connection.agent.request('initialize', {
    protocolVersion: PROTOCOL_VERSION,
    clientCapabilities: { fs: { readTextFile: false, writeTextFile: false }, terminal: false },
    clientInfo: { name: 'acp-adapters test', version: '0' },
  });
  return {
    child,
    connection,
    init,
    updates,
    permissions,
    stderr: () => stderr,
    async close() {
      child.stdin!.end();
      const ended = await Promise.race([
        exited.then(() => true),
        new Promise<boolean>((resolve) => setTimeout(() => resolve(false), 15_000)),
      ]);
      if (!ended && child.exitCode === null) {
        // The namespace init is the group leader; killing it ends the namespaces (`--kill-child`).
        process.kill(-child.pid!, 'SIGKILL');
        await exited;
      }
      await isolation.close();
    },
  };
}

const updatesOf = (session: AdapterSession, sessionId: string) =>
  session.updates.filter((n) => n.sessionId === sessionId).map((n) => n.update);

/** The text of every `agent_message_chunk` among `updates`, joined. */
function messageText(updates: ReturnType<typeof updatesOf>): string {
  return updates
    .flatMap((u) => (u.sessionUpdate === 'agent_message_chunk' && u.content.type === 'text' ? [u.content.text] : []))
    .join('');
}

/** Who sends the model requests (the `user-agent` header). */
const USER_AGENT: Record<AdapterEngine, RegExp> = {
  claude: new RegExp(`^claude-cli/${CLAUDE_VERSION.replaceAll('.', '\\.')} `),
  codex: /^codex_cli_rs\/0\.137\.0 /,
};

/** The tool kind each adapter reports for the scripted `write_file` (claude's own Write tool, codex's shell). */
const WRITE_KIND: Record<AdapterEngine, string> = { claude: 'edit', codex: 'execute' };

describe.for(ENGINES)('%s over ACP through its adapter', (engine) => {
  beforeEach(({ skip }) => {
    if (MISSING[engine]) skip(MISSING[engine]);
    if (!NAMESPACES.available) skip(`no namespaces here to keep the adapter off the network: ${NAMESPACES.reason}`);
  });

  it('a prompt writes a file through the engine tool after an allowed permission request, ends end_turn; session/load continues the session in a new adapter process', async () => {
    const ready = await prepareAdapter(engine, 'allow', [
      { type: 'write_file', path: 'hello.txt', content: 'written over acp\n' },
      { type: 'final', text: 'Wrote hello.txt.', done: false },
      { type: 'final', text: 'Second turn, after load.', done: false },
    ]);
    try {
      // codex's shared config.toml (its trust comes as `-c`): the adapter's codex must not write into it.
      const codexConfig = path.join(ready.prepared.configRoots[0]!, 'config.toml');
      const configBefore = engine === 'codex' ? fs.readFileSync(codexConfig, 'utf8') : null;
      const acp = await startAdapter(ready, 'allow_once');
      // Both adapters load sessions; neither needs an authentication step with the managed env.
      expect(acp.init).toMatchObject({ protocolVersion: PROTOCOL_VERSION, agentCapabilities: { loadSession: true } });
      const { sessionId } = await acp.connection.agent.request('session/new', { cwd: ready.runDir, mcpServers: [] });
      const first = await acp.connection.agent.request('session/prompt', {
        sessionId,
        prompt: [{ type: 'text', text: 'Write hello.txt, then say so.' }],
      });
      expect(first.stopReason, acp.stderr()).toBe('end_turn');
      const updates = updatesOf(acp, sessionId);
      const call = updates.find((u) => u.sessionUpdate === 'tool_call');
      expect(call).toMatchObject({ sessionUpdate: 'tool_call', kind: WRITE_KIND[engine] });
      const toolCallId = (call as { toolCallId: string }).toolCallId;
      expect(updates).toContainEqual(
        expect.objectContaining({ sessionUpdate: 'tool_call_update', toolCallId, status: 'completed' }),
      );
      expect(acp.permissions.map((p) => p.toolCall.toolCallId)).toContain(toolCallId);
      expect(messageText(updates)).toContain('Wrote hello.txt.');
      expect(fs.readFileSync(path.join(ready.runDir, 'hello.txt'), 'utf8')).toBe('written over acp\n');
      // The model was asked through the engine's own wire API only: the scripted server knew every request.
      expect(ready.server.requests.map((r) => r.response_kind)).toEqual(['shell', 'final']);
      // The engine that asked: the pinned claude CLI (not the Agent SDK's bundled 2.1.83), codex-acp's own codex.
      for (const request of ready.server.requests) expect(request.headers['user-agent']).toMatch(USER_AGENT[engine]);
      await acp.close();

      // A new adapter process loads the session from the managed home and continues it.
      const again = await startAdapter(ready, 'allow_once');
      await again.connection.agent.request('session/load', { sessionId, cwd: ready.runDir, mcpServers: [] });
      expect(messageText(updatesOf(again, sessionId))).toContain('Wrote hello.txt.');
      const before = again.updates.length;
      const second = await again.connection.agent.request('session/prompt', {
        sessionId,
        prompt: [{ type: 'text', text: 'And now?' }],
      });
      expect(second.stopReason, again.stderr()).toBe('end_turn');
      expect(messageText(again.updates.slice(before).map((n) => n.update))).toContain('Second turn, after load.');
      // The engine sent the whole session again: the third turn was picked from its history.
      expect(ready.server.requests.at(-1)).toMatchObject({ response_kind: 'final', turn_index: 2 });
      await again.close();
      if (configBefore !== null) expect(fs.readFileSync(codexConfig, 'utf8')).toBe(configBefore);
    } finally {
      await ready.dispose();
    }
  });

  it('a rejected permission request: the file is not written', async () => {
    const ready = await prepareAdapter(engine, 'reject', [
      { type: 'write_file', path: 'rejected.txt', content: 'must not exist\n' },
      { type: 'final', text: 'Left it alone.', done: false },
    ]);
    try {
      const acp = await startAdapter(ready, 'reject_once');
      const { sessionId } = await acp.connection.agent.request('session/new', { cwd: ready.runDir, mcpServers: [] });
      const answer = await acp.connection.agent.request('session/prompt', {
        sessionId,
        prompt: [{ type: 'text', text: 'Write rejected.txt.' }],
      });
      expect(acp.permissions.length, acp.stderr()).toBeGreaterThan(0);
      const updates = updatesOf(acp, sessionId);
      if (engine === 'claude') {
        // claude reports the call failed and goes on with the model: its final message ends the turn.
        expect(answer.stopReason).toBe('end_turn');
        expect(updates).toContainEqual(
          expect.objectContaining({ sessionUpdate: 'tool_call_update', status: 'failed' }),
        );
        expect(messageText(updates)).toContain('Left it alone.');
      } else {
        // codex's answer to a rejection is "abort": the turn ends there, without asking the model again.
        expect(answer.stopReason).toBe('cancelled');
        expect(ready.server.requests).toHaveLength(1);
      }
      expect(fs.existsSync(path.join(ready.runDir, 'rejected.txt'))).toBe(false);
      await acp.close();
    } finally {
      await ready.dispose();
    }
  });

  it('session/cancel in the middle of a blocking shell call answers cancelled and leaves no process', async () => {
    const sleep = `sleep ${uniqueSleepSeconds()}`;
    const ready = await prepareAdapter(engine, 'cancel', [
      { type: 'shell', command: sleep },
      { type: 'final', text: 'never reached', done: false },
    ]);
    try {
      const acp = await startAdapter(ready, 'allow_once');
      const { sessionId } = await acp.connection.agent.request('session/new', { cwd: ready.runDir, mcpServers: [] });
      const prompt = acp.connection.agent.request('session/prompt', {
        sessionId,
        prompt: [{ type: 'text', text: 'Sleep.' }],
      });
      const called = () => updatesOf(acp, sessionId).some((u) => u.sessionUpdate === 'tool_call');
      expect(await eventually(() => called() && pidsWithMarker(sleep).length > 0, 120_000, 200), acp.stderr()).toBe(
        true,
      );
      await acp.connection.agent.notify('session/cancel', { sessionId });
      const answer = await prompt;
      expect(answer.stopReason, acp.stderr()).toBe('cancelled');
      // The adapter killed the blocked command itself (codex only since its unified exec is off: see codex/acp.ts).
      expect(await eventually(() => pidsWithMarker(sleep).length === 0, 30_000)).toBe(true);
      // The adapter is still up.
      expect(acp.child.exitCode).toBeNull();
      expect(ready.server.requests.map((r) => r.response_kind)).toEqual(['shell']);
      await acp.close();
      expect(pidsWithMarker(sleep)).toEqual([]);
    } finally {
      await ready.dispose();
    }
  });
});
