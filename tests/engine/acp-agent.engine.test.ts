/**
 * `agent-harness acp <engine>` driven by a client built with `@agentclientprotocol/sdk`, as an editor would: the bin
 * runs as a real subprocess on stdio, the real engine CLI runs against the scripted model. A prompt is one audited
 * attempt (its updates carry the tool call and the message), the next prompt resumes the same engine session,
 * `session/load` reopens the run by its handle, and `session/cancel` in the middle of a tool call ends with
 * `cancelled` and no process left.
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
  type SessionNotification,
} from '@agentclientprotocol/sdk';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { missingReasons, registryEngines } from '../helpers/engines.js';
import { eventually, foregroundSleep, pidsWithMarker, uniqueSleepSeconds } from '../helpers/processes.js';

const BIN = path.resolve('bin/agent-harness.js');
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'ah-acp-'));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));
const MISSING = await missingReasons();

/** A running `agent-harness acp` with an SDK client connected to it, and every update it sent. */
interface AcpHarness {
  child: ChildProcess;
  connection: ClientConnection;
  updates: SessionNotification[];
  stderr: () => string;
  /** Every line the agent wrote to stdout (each must be a JSON-RPC message). */
  stdoutLines: () => string[];
  /** Closes stdin and resolves the exit code. */
  close(): Promise<number | null>;
}

function writeScript(name: string, turns: unknown[]): string {
  const file = path.join(tmp, name);
  fs.writeFileSync(file, JSON.stringify({ version: 1, turns }));
  return file;
}

function startAcp(engine: string, script: string, runRoot: string): AcpHarness {
  const child = spawn(process.execPath, [BIN, 'acp', engine, '--script', script, '--run-root', runRoot], {
    env: { ...process.env, SKILL_RUNNER_DATA_DIR: path.join(tmp, 'data') },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  let stdout = '';
  child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const updates: SessionNotification[] = [];
  const connection = client({ name: 'acp-agent test' })
    .onNotification('session/update', ({ params }) => {
      updates.push(params);
    })
    .connect(
      ndJsonStream(
        Writable.toWeb(child.stdin!) as WritableStream<Uint8Array>,
        Readable.toWeb(child.stdout!) as ReadableStream<Uint8Array>,
      ),
    );
  return {
    child,
    connection,
    updates,
    stderr: () => stderr,
    stdoutLines: () => stdout.split('\n').filter((line) => line.length > 0),
    async close() {
      child.stdin!.end();
      return exited;
    },
  };
}

/** Pids whose parent is `pid` (from /proc: zombies and exited ones excluded). */
function childrenOf(pid: number): number[] {
  const found: number[] = [];
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (Number(fields[1]) === pid && fields[0] !== 'Z') found.push(Number(entry));
    } catch {
      // exited meanwhile
    }
  }
  return found;
}

const updatesOf = (harness: AcpHarness, sessionId: string) =>
  harness.updates.filter((n) => n.sessionId === sessionId).map((n) => n.update);

describe.for(registryEngines())('agent-harness acp %s', (engine) => {
  beforeEach(({ skip }) => {
    if (MISSING[engine]) skip(MISSING[engine]);
  });

  it('initialize, session/new, a prompt with a tool call ends end_turn with a run and its audit; the next prompt resumes; session/load reopens it', async () => {
    const runRoot = path.join(tmp, `runs-${engine}`);
    const script = writeScript(`turns-${engine}.json`, [
      { type: 'shell', command: 'echo acp-was-here > out.txt' },
      { type: 'final', text: 'Wrote out.txt.', done: true },
      { type: 'final', text: 'Second turn, same session.', done: true },
      { type: 'final', text: 'Third turn, after load.', done: true },
    ]);
    const acp = startAcp(engine, script, runRoot);
    const init = await acp.connection.agent.request('initialize', {
      protocolVersion: PROTOCOL_VERSION,
      clientCapabilities: {},
      clientInfo: { name: 'test', version: '0' },
    });
    expect(init).toMatchObject({
      protocolVersion: PROTOCOL_VERSION,
      agentCapabilities: { loadSession: true },
      agentInfo: { name: 'agent-harness' },
    });
    const { sessionId } = await acp.connection.agent.request('session/new', { cwd: tmp, mcpServers: [] });
    expect(sessionId).toMatch(/^[0-9a-f]{8}$/);

    const first = await acp.connection.agent.request('session/prompt', {
      sessionId,
      prompt: [{ type: 'text', text: 'Write out.txt, then say so.' }],
    });
    expect(first.stopReason, acp.stderr()).toBe('end_turn');
    const firstUpdates = updatesOf(acp, sessionId);
    const call = firstUpdates.find((u) => u.sessionUpdate === 'tool_call');
    expect(call).toMatchObject({ sessionUpdate: 'tool_call', kind: 'execute', status: 'in_progress' });
    expect(JSON.stringify(call)).toContain('acp-was-here');
    expect(firstUpdates).toContainEqual(
      expect.objectContaining({
        sessionUpdate: 'tool_call_update',
        toolCallId: (call as { toolCallId: string }).toolCallId,
        status: 'completed',
      }),
    );
    const text = (updates: typeof firstUpdates) =>
      updates
        .flatMap((u) =>
          u.sessionUpdate === 'agent_message_chunk' && u.content.type === 'text' ? [u.content.text] : [],
        )
        .join('');
    expect(text(firstUpdates)).toContain('Wrote out.txt.');

    // The run: a directory under the run root, named by the session id (its handle), with the attempt's audit.
    const meta = first._meta as { agentHarness: { runDir: string; handle: string; engineSessionId: string } };
    expect(meta.agentHarness.handle).toBe(sessionId);
    const runDir = meta.agentHarness.runDir;
    expect(path.dirname(runDir)).toBe(runRoot);
    expect(fs.readFileSync(path.join(runDir, 'out.txt'), 'utf8')).toBe('acp-was-here\n');
    const meta1 = JSON.parse(fs.readFileSync(path.join(runDir, '.audit', 'meta.1.json'), 'utf8'));
    expect(meta1).toMatchObject({ status: 'finished', completion: { state: 'completed' } });
    expect(fs.readFileSync(path.join(runDir, '.audit', 'rasp.1.jsonl'), 'utf8')).toContain('engine.tool.call');
    expect(fs.readFileSync(path.join(runDir, '.audit', 'fcmp.1.jsonl'), 'utf8').length).toBeGreaterThan(0);

    // The next prompt resumes the engine's session: attempt 2 of the same run, the same engine session id.
    const before = acp.updates.length;
    const second = await acp.connection.agent.request('session/prompt', {
      sessionId,
      prompt: [{ type: 'text', text: 'And now?' }],
    });
    expect(second.stopReason, acp.stderr()).toBe('end_turn');
    expect(text(acp.updates.slice(before).map((n) => n.update))).toContain('Second turn, same session.');
    const meta2 = JSON.parse(fs.readFileSync(path.join(runDir, '.audit', 'meta.2.json'), 'utf8'));
    expect(meta2.launch).toBe('resume');
    expect(meta2.session_id).toBe(meta1.session_id);
    expect((second._meta as typeof meta).agentHarness.engineSessionId).toBe(meta1.session_id);
    expect(await acp.close()).toBe(0);
    // Stdout carried JSON-RPC only; the log went to stderr.
    for (const line of acp.stdoutLines()) expect(JSON.parse(line)).toMatchObject({ jsonrpc: '2.0' });
    expect(acp.stderr()).toContain(`agent-harness acp: session ${sessionId}: attempt 2 ended completed`);

    // A new agent process loads the run by its handle: the recorded turns come back as updates, and a prompt resumes.
    const again = startAcp(engine, script, runRoot);
    await again.connection.agent.request('initialize', { protocolVersion: PROTOCOL_VERSION, clientCapabilities: {} });
    await again.connection.agent.request('session/load', { sessionId, cwd: tmp, mcpServers: [] });
    const replayed = updatesOf(again, sessionId);
    expect(replayed.some((u) => u.sessionUpdate === 'tool_call')).toBe(true);
    expect(text(replayed)).toContain('Second turn, same session.');
    const third = await again.connection.agent.request('session/prompt', {
      sessionId,
      prompt: [{ type: 'text', text: 'Once more.' }],
    });
    expect(third.stopReason, again.stderr()).toBe('end_turn');
    const meta3 = JSON.parse(fs.readFileSync(path.join(runDir, '.audit', 'meta.3.json'), 'utf8'));
    expect(meta3).toMatchObject({ launch: 'resume', session_id: meta1.session_id });
    expect(await again.close()).toBe(0);
  });

  it('session/cancel in the middle of a tool call answers cancelled and leaves no process', async () => {
    const seconds = uniqueSleepSeconds();
    const sleep = `sleep ${seconds}`;
    const script = writeScript(`slow-${engine}.json`, [
      { type: 'shell', command: foregroundSleep(seconds) },
      { type: 'final', text: 'never reached', done: true },
    ]);
    const acp = startAcp(engine, script, path.join(tmp, `runs-cancel-${engine}`));
    await acp.connection.agent.request('initialize', { protocolVersion: PROTOCOL_VERSION, clientCapabilities: {} });
    const { sessionId } = await acp.connection.agent.request('session/new', { cwd: tmp, mcpServers: [] });
    const prompt = acp.connection.agent.request('session/prompt', {
      sessionId,
      prompt: [{ type: 'text', text: 'Sleep.' }],
    });
    // Cancel once the agent's shell sleeps and its tool call was sent as an update (opencode reports a tool call only
    // once it finished: for it, the running sleep alone is the middle of the tool call).
    const sentCall = () =>
      engine === 'opencode' || updatesOf(acp, sessionId).some((u) => u.sessionUpdate === 'tool_call');
    expect(await eventually(() => sentCall() && pidsWithMarker(sleep).length > 0, 150_000, 200), acp.stderr()).toBe(
      true,
    );
    expect(childrenOf(acp.child.pid!).length).toBeGreaterThan(0);
    await acp.connection.agent.notify('session/cancel', { sessionId });
    const answer = await prompt;
    expect(answer.stopReason, acp.stderr()).toBe('cancelled');
    const runDir = (answer._meta as { agentHarness: { runDir: string } }).agentHarness.runDir;
    const meta = JSON.parse(fs.readFileSync(path.join(runDir, '.audit', 'meta.1.json'), 'utf8'));
    expect(meta).toMatchObject({ status: 'finished', completion: { state: 'failed', code: 'ENGINE_CANCELED' } });
    // Nothing of the attempt is left: no sleep, no child of the agent (namespace init, engine), the agent still up.
    expect(await eventually(() => pidsWithMarker(sleep).length === 0, 30_000)).toBe(true);
    expect(await eventually(() => childrenOf(acp.child.pid!).length === 0, 30_000)).toBe(true);
    expect(acp.child.exitCode).toBeNull();
    expect(await acp.close()).toBe(0);
  });
});

/**
 * What the ACP face does on its own, whatever the engine behind it: an editor that leaves, and a failed attempt
 * answered as a JSON-RPC error. The engine's part (ending its process tree, judging a 401) is tested on every engine
 * above and in the engine matrix, so these run on the cheapest engine only.
 */
describe.for(['codex'] as const)('agent-harness acp %s: the face itself', (engine) => {
  beforeEach(({ skip }) => {
    if (MISSING[engine]) skip(MISSING[engine]);
  });

  it('an editor that goes away mid-prompt: the attempt is cancelled and sealed, nothing is left, the agent exits 0', async () => {
    const seconds = uniqueSleepSeconds();
    const sleep = `sleep ${seconds}`;
    const script = writeScript(`gone-${engine}.json`, [
      { type: 'shell', command: foregroundSleep(seconds) },
      { type: 'final', text: 'never reached', done: true },
    ]);
    const runRoot = path.join(tmp, `runs-gone-${engine}`);
    const acp = startAcp(engine, script, runRoot);
    await acp.connection.agent.request('initialize', { protocolVersion: PROTOCOL_VERSION, clientCapabilities: {} });
    const { sessionId } = await acp.connection.agent.request('session/new', { cwd: tmp, mcpServers: [] });
    const prompt = acp.connection.agent.request('session/prompt', {
      sessionId,
      prompt: [{ type: 'text', text: 'Sleep.' }],
    });
    prompt.catch(() => undefined);
    expect(await eventually(() => pidsWithMarker(sleep).length > 0, 150_000, 200), acp.stderr()).toBe(true);
    expect(await acp.close(), acp.stderr()).toBe(0);
    expect(await eventually(() => pidsWithMarker(sleep).length === 0, 30_000)).toBe(true);
    const runDir = path.join(runRoot, fs.readdirSync(runRoot).find((name) => name.endsWith(sessionId))!);
    const meta = JSON.parse(fs.readFileSync(path.join(runDir, '.audit', 'meta.1.json'), 'utf8'));
    expect(meta).toMatchObject({ status: 'finished', completion: { state: 'failed', code: 'ENGINE_CANCELED' } });
  });

  it('a failed attempt answers a JSON-RPC error naming the failure, the run and its audit', async () => {
    const script = writeScript(`failing-${engine}.json`, [
      { type: 'error', status: 401, message: 'invalid api key for the scripted model' },
    ]);
    const acp = startAcp(engine, script, path.join(tmp, `runs-failing-${engine}`));
    await acp.connection.agent.request('initialize', { protocolVersion: PROTOCOL_VERSION, clientCapabilities: {} });
    const { sessionId } = await acp.connection.agent.request('session/new', { cwd: tmp, mcpServers: [] });
    const failure = await acp.connection.agent
      .request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'Hello.' }] })
      .then(
        () => null,
        (error: unknown) => error as { message: string; data: { handle: string; audit: string; code: string } },
      );
    expect(failure, acp.stderr()).not.toBeNull();
    expect(failure!.message).toContain(`of run ${sessionId} (${engine}) ended failed`);
    expect(failure!.data).toMatchObject({ handle: sessionId, completion: { state: 'failed' } });
    expect(fs.existsSync(path.join(failure!.data.audit, 'meta.1.json'))).toBe(true);
    expect(await acp.close()).toBe(0);
  });
});
