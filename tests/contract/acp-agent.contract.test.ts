/**
 * The ACP agent without an engine process: RASP → `session/update` (golden recordings through the real parsers), the
 * stop reasons, and the agent's answers over the SDK's in-process connection (initialize, session/new making a run,
 * the refusals: unknown session, empty prompt, unknown or foreign handle, SSE MCP server).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { client, PROTOCOL_VERSION, type SessionUpdate } from '@agentclientprotocol/sdk';
import { afterAll, describe, expect, it } from 'vitest';
import { createAcpAgent, mcpServerDefs, promptText } from '../../src/acp/agent.js';
import { createSessionUpdateMapper, stopReasonOf, toolCallTitle } from '../../src/acp/updates.js';
import { claudeEngine } from '../../src/engines/claude/index.js';
import { codexEngine } from '../../src/engines/codex/index.js';
import { RASP_VERSION, type RaspEvent } from '../../src/protocol/index.js';
import { resolveHarnessPaths } from '../../src/runtime/paths.js';
import { createRun } from '../../src/runtime/run-store.js';
import { translateRecorded } from '../../src/translate/recorded.js';
import { createCliSandbox, runCliProcess } from '../helpers/cli.js';
import { liveEvents } from '../helpers/live-events.js';

const STREAMS = path.resolve(import.meta.dirname, '..', '..', 'fixtures', 'streams');
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'ah-acp-contract-'));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

/** The updates of an attempt's live events (its RASP, each followed by the FCMP it gave). */
function updatesOf(rasp: readonly RaspEvent[]): SessionUpdate[] {
  const map = createSessionUpdateMapper();
  return liveEvents(rasp).flatMap((event) => map(event));
}

function event(data: RaspEvent['data'], seq = 1): RaspEvent {
  return {
    protocol_version: RASP_VERSION,
    run_id: 'r',
    attempt: 1,
    seq,
    ts: new Date(0).toISOString(),
    engine: 'codex',
    data,
    raw_ref: null,
  };
}

describe('RASP and FCMP → session/update', () => {
  it('a recorded codex turn: the shell call, its completion, then the message', () => {
    const { rasp } = translateRecorded(codexEngine, {
      stdout: fs.readFileSync(path.join(STREAMS, 'codex', 'turn1.stdout.jsonl')),
    });
    const updates = updatesOf(rasp);
    expect(updates.map((u) => u.sessionUpdate)).toEqual(['tool_call', 'tool_call_update', 'agent_message_chunk']);
    expect(updates[0]).toMatchObject({
      sessionUpdate: 'tool_call',
      kind: 'execute',
      status: 'in_progress',
      title: 'echo hello > out.txt',
    });
    expect(updates[1]).toMatchObject({
      toolCallId: (updates[0] as { toolCallId: string }).toolCallId,
      status: 'completed',
      rawOutput: { exit_code: 0 },
    });
    expect(updates[2]).toMatchObject({ content: { type: 'text', text: 'DONE' } });
  });

  it('a recorded claude turn with thinking: a thought chunk before the message', () => {
    const { rasp } = translateRecorded(claudeEngine, {
      stdout: fs.readFileSync(path.join(STREAMS, 'claude', 'thinking.stdout.jsonl')),
    });
    const kinds = updatesOf(rasp).map((u) => u.sessionUpdate);
    expect(kinds).toContain('agent_thought_chunk');
    expect(kinds.indexOf('agent_thought_chunk')).toBeLessThan(kinds.lastIndexOf('agent_message_chunk'));
  });

  it('streamed deltas are sent as they come, and the whole message that repeats them is not', () => {
    const updates = updatesOf([
      event({ type: 'engine.assistant.message', message_id: 'm1', text: 'Hel', final: false }, 1),
      event({ type: 'engine.assistant.message', message_id: 'm1', text: 'lo', final: false }, 2),
      event({ type: 'engine.assistant.message', message_id: 'm1', text: 'Hello', final: true }, 3),
      event({ type: 'engine.assistant.message', message_id: 'm2', text: 'Whole', final: true }, 4),
    ]);
    expect(updates).toEqual([
      { sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: 'Hel' }, messageId: 'm1' },
      { sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: 'lo' }, messageId: 'm1' },
      { sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: 'Whole' }, messageId: 'm2' },
    ]);
  });

  it('the done marker never reaches the chat: a whole message, and one split across deltas', () => {
    const updates = updatesOf([
      event({ type: 'engine.assistant.message', message_id: 'm1', text: 'Wrote it.\n__SKILL_DONE__', final: true }, 1),
      event({ type: 'engine.assistant.message', message_id: 'm2', text: 'Done.\n__SKI', final: false }, 2),
      event({ type: 'engine.assistant.message', message_id: 'm2', text: 'LL_DONE__', final: false }, 3),
      event({ type: 'engine.assistant.message', message_id: 'm2', text: ' bye _', final: false }, 4),
      event(
        { type: 'engine.assistant.message', message_id: 'm2', text: 'Done.\n__SKILL_DONE__ bye _', final: true },
        5,
      ),
    ]);
    const texts = updates.map((u) => (u as { content: { text: string } }).content.text);
    expect(texts.join('|')).not.toContain('SKILL_DONE');
    expect(texts).toEqual(['Wrote it.', 'Done.\n', ' bye ', '_']);
  });

  it('a declined tool call is failed, its output the update content; lifecycle and usage are not sent', () => {
    const updates = updatesOf([
      event({ type: 'lifecycle.started', launch: 'start', argv: [], cwd: '/', pid: 1, io: 'split' }, 1),
      event({ type: 'engine.tool.call', call_id: 'c', kind: 'file_change', name: 'Write', input: {} }, 2),
      event({ type: 'engine.tool.result', call_id: 'c', status: 'declined', output: 'denied', exit_code: null }, 3),
    ]);
    expect(updates).toEqual([
      {
        sessionUpdate: 'tool_call',
        toolCallId: 'c',
        title: 'Write',
        kind: 'edit',
        status: 'in_progress',
        rawInput: {},
      },
      {
        sessionUpdate: 'tool_call_update',
        toolCallId: 'c',
        status: 'failed',
        content: [{ type: 'content', content: { type: 'text', text: 'denied' } }],
        rawOutput: { output: 'denied', exit_code: null },
      },
    ]);
  });

  it('titles: a shell command (string or argv), else the tool name', () => {
    expect(toolCallTitle({ name: 'Bash', command: 'ls -l' })).toBe('ls -l');
    expect(toolCallTitle({ name: 'exec', command: 'git status' })).toBe('git status');
    expect(toolCallTitle({ name: 'mcp__fs__read', command: null })).toBe('mcp__fs__read');
  });

  it('stop reasons: cancelled wins; completed and awaiting input end the turn; a failure has none', () => {
    const of = (state: string) => ({ completion: { state, reason: 'r' } }) as Parameters<typeof stopReasonOf>[0];
    expect(stopReasonOf(of('failed'), true)).toBe('cancelled');
    expect(stopReasonOf(of('completed'), false)).toBe('end_turn');
    expect(stopReasonOf(of('awaiting_input'), false)).toBe('end_turn');
    expect(stopReasonOf(of('failed'), false)).toBeNull();
    expect(stopReasonOf(of('unknown'), false)).toBeNull();
  });
});

describe('prompt and MCP servers', () => {
  it('prompt text joins text, links and embedded text resources; no text is invalid params', () => {
    expect(
      promptText([
        { type: 'text', text: 'Fix it.' },
        { type: 'resource_link', uri: 'file:///a.ts', name: 'a.ts' },
        { type: 'resource', resource: { uri: 'file:///b.ts', text: 'let b;' } },
      ]),
    ).toBe('Fix it.\n\n@file:///a.ts\n\n<context uri="file:///b.ts">\nlet b;\n</context>');
    expect(() => promptText([{ type: 'image', data: '', mimeType: 'image/png' }])).toThrow(/has no text/);
  });

  it('stdio and HTTP servers become definitions; SSE and bad names are refused', () => {
    expect(
      mcpServerDefs([
        { name: 'fs', command: 'node', args: ['s.js'], env: [{ name: 'K', value: 'v' }] },
        {
          type: 'http',
          name: 'web',
          url: 'http://127.0.0.1:9/mcp',
          headers: [{ name: 'Authorization', value: 'Bearer t' }],
        },
      ]),
    ).toEqual([
      { name: 'fs', command: ['node', 's.js'], env: { K: 'v' } },
      { name: 'web', url: 'http://127.0.0.1:9/mcp', bearerToken: 't' },
    ]);
    expect(() => mcpServerDefs([{ type: 'sse', name: 's', url: 'http://127.0.0.1:9', headers: [] }])).toThrow(/SSE/);
    expect(() => mcpServerDefs([{ name: 'bad name', command: 'x', args: [], env: [] }])).toThrow(/bad name/);
  });
});

describe('the agent over the SDK (in process, no engine)', () => {
  const runRoot = path.join(tmp, 'runs');
  const paths = resolveHarnessPaths({ projectRoot: tmp, runRoot, env: {} });
  const logs: string[] = [];
  const acp = createAcpAgent({
    engine: 'codex',
    paths,
    modelMode: 'scripted',
    script: null,
    version: '9.9.9',
    log: (line) => logs.push(line),
  });
  const agentSide = client({ name: 'contract' }).connect(acp.app).agent;

  it('initialize answers the protocol version, loadSession and the agent info', async () => {
    const init = await agentSide.request('initialize', { protocolVersion: PROTOCOL_VERSION, clientCapabilities: {} });
    expect(init).toMatchObject({
      protocolVersion: PROTOCOL_VERSION,
      agentCapabilities: { loadSession: true, mcpCapabilities: { http: true, sse: false } },
      agentInfo: { name: 'agent-harness', title: 'agent-harness (codex)', version: '9.9.9' },
    });
  });

  it('session/new makes a run under the run root (no attempt yet) whose handle is the session id', async () => {
    const { sessionId } = await agentSide.request('session/new', { cwd: '/editor/project', mcpServers: [] });
    const entries = fs.readdirSync(runRoot).filter((name) => name.endsWith(`-codex-${sessionId}`));
    expect(entries).toHaveLength(1);
    const record = JSON.parse(fs.readFileSync(path.join(runRoot, entries[0]!, '.audit', 'run.json'), 'utf8'));
    expect(record).toMatchObject({ handle: sessionId, engine: 'codex', attempts: 0, label: 'acp: /editor/project' });
    expect(logs.join('\n')).toContain(`session ${sessionId}: new run of codex`);
  });

  it('refuses what it cannot serve, with messages that name the value', async () => {
    await expect(
      agentSide.request('session/prompt', { sessionId: 'feedbeef', prompt: [{ type: 'text', text: 'hi' }] }),
    ).rejects.toThrow(/feedbeef/);
    const { sessionId } = await agentSide.request('session/new', { cwd: tmp, mcpServers: [] });
    await expect(agentSide.request('session/prompt', { sessionId, prompt: [] })).rejects.toThrow(/has no text/);
    await expect(
      agentSide.request('session/load', { sessionId: '0badc0de', cwd: tmp, mcpServers: [] }),
    ).rejects.toThrow(/RUN_NOT_FOUND/);
    const claudeRun = await createRun(runRoot, {
      engine: 'claude',
      translateMode: 0,
      modelMode: 'scripted',
      script: null,
    });
    await expect(
      agentSide.request('session/load', { sessionId: claudeRun.handle, cwd: tmp, mcpServers: [] }),
    ).rejects.toThrow(/is a claude run; this agent serves codex/);
    await expect(
      agentSide.request('session/new', {
        cwd: tmp,
        mcpServers: [{ type: 'sse', name: 'old', url: 'http://127.0.0.1:9', headers: [] }],
      }),
    ).rejects.toThrow(/SSE server/);
  });
});

describe('the acp command', () => {
  const sandbox = createCliSandbox();
  afterAll(() => sandbox.cleanup());

  it('--help teaches the sessions, the prompts and an editor config', () => {
    const help = runCliProcess(sandbox, ['acp', '--help']);
    expect(help.status).toBe(0);
    expect(help.stdout).toContain('<engine>');
    expect(help.stdout).toContain('session/load <handle>');
    expect(help.stdout).toContain('"agent_servers"');
  });

  it('an unknown engine or a bad script is refused before an editor sees an agent', () => {
    const unknown = runCliProcess(sandbox, ['acp', 'nope']);
    expect(unknown.status).toBe(2);
    expect(unknown.stderr).toContain('ENGINE_UNKNOWN');
    expect(unknown.stdout).toBe('');
    fs.writeFileSync(path.join(sandbox.root, 'bad.json'), '{"version": 1, "turns": [{"type": "nope"}]}');
    const bad = runCliProcess(sandbox, ['acp', 'codex', '--script', 'bad.json']);
    expect(bad.status).not.toBe(0);
    expect(bad.stderr).toContain('MODEL_SCRIPT_INVALID');
    expect(bad.stdout).toBe('');
  });
});
