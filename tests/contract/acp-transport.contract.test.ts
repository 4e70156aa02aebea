/**
 * Providers over ACP without an engine process: the ACP parser on an agent's JSON-RPC lines (shaped as gemini 0.61
 * and opencode 1.18 print them), the permission policy, and the refusals before any run exists (an engine without an
 * ACP mode, a transport that is not one).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createAcpParser } from '../../src/engines/acp/parse.js';
import { decidePermission } from '../../src/engines/acp/permissions.js';
import { acpAdapterMissing } from '../../src/engines/acp/adapter-package.js';
import type { ParserOutput } from '../../src/engines/engine.js';
import { registerEngine } from '../../src/engines/registry.js';
import { isAgentHarnessError } from '../../src/errors/index.js';
import { DEFAULT_AGENT_OPTIONS } from '../../src/protocol/index.js';
import { getProvider } from '../../src/providers/index.js';
import { ACP_META_KEY, readAcpConformanceMeta } from '../../src/report/acp-conformance.js';
import { buildConsistencyReport } from '../../src/report/build.js';
import { renderMarkdown } from '../../src/report/render.js';
import { SIXTH_ID, sixthEngine, sixthEntry } from '../helpers/sixth-engine/index.js';

const runRoot = fs.mkdtempSync(path.join(os.tmpdir(), 'ah-acp-transport-'));
afterAll(() => fs.rmSync(runRoot, { recursive: true, force: true }));

const SID = 'cfb9918a-f40c-4b5a-8553-d8d31abf36e3';
const update = (u: object) =>
  JSON.stringify({ jsonrpc: '2.0', method: 'session/update', params: { sessionId: SID, update: u } });
const diff = {
  type: 'diff',
  path: '/run/hello.txt',
  oldText: '',
  newText: 'hi\n',
  _meta: { kind: 'add' },
};
const CALL = 'write_file__write_file_1795698924113_0';

function parse(lines: string[]): ParserOutput[] {
  const parser = createAcpParser();
  return [...lines.flatMap((line) => parser.line('stdout', line)), ...parser.end()];
}

describe('the ACP parser', () => {
  it('turns a session with a permission-asked tool call into the RASP events of a native stream', () => {
    const out = parse([
      JSON.stringify({
        jsonrpc: '2.0',
        id: 0,
        result: { protocolVersion: 1, agentCapabilities: { loadSession: true } },
      }),
      JSON.stringify({ jsonrpc: '2.0', id: 1, result: { sessionId: SID } }),
      update({ sessionUpdate: 'available_commands_update', availableCommands: [] }),
      update({ sessionUpdate: 'agent_thought_chunk', content: { type: 'text', text: 'Think' } }),
      update({ sessionUpdate: 'agent_thought_chunk', content: { type: 'text', text: 'ing.' } }),
      JSON.stringify({
        jsonrpc: '2.0',
        id: 0,
        method: 'session/request_permission',
        params: {
          sessionId: SID,
          options: [{ optionId: 'proceed_once', kind: 'allow_once', name: 'Allow' }],
          toolCall: {
            toolCallId: CALL,
            status: 'pending',
            title: 'Writing to hello.txt',
            kind: 'edit',
            content: [diff],
          },
        },
      }),
      update({ sessionUpdate: 'tool_call_update', toolCallId: CALL, status: 'completed', content: [diff] }),
      update({ sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: 'Wrote ' } }),
      update({ sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: 'hello.txt.' } }),
      JSON.stringify({
        jsonrpc: '2.0',
        id: 2,
        result: { stopReason: 'end_turn', usage: { inputTokens: 10, outputTokens: 5 } },
      }),
    ]);
    const events = out.filter((o) => o.type !== 'diagnostic');
    expect(events.map((e) => e.type)).toEqual([
      'engine.session',
      'engine.turn.started',
      'engine.reasoning',
      'engine.tool.call',
      'engine.tool.result',
      'engine.file.change',
      'engine.assistant.message',
      'engine.assistant.message',
      'engine.assistant.message',
      'engine.usage',
      'engine.turn.end',
    ]);
    expect(events).toContainEqual({ type: 'engine.session', session_id: SID });
    expect(events).toContainEqual({ type: 'engine.reasoning', item_id: null, text: 'Thinking.' });
    expect(events).toContainEqual(
      expect.objectContaining({ type: 'engine.tool.call', call_id: CALL, kind: 'file_change', name: 'write_file' }),
    );
    expect(events).toContainEqual(
      expect.objectContaining({ type: 'engine.tool.result', call_id: CALL, status: 'completed' }),
    );
    expect(events).toContainEqual({
      type: 'engine.assistant.message',
      message_id: 'msg_1',
      text: 'Wrote hello.txt.',
      final: true,
    });
    expect(events.at(-1)).toEqual({ type: 'engine.turn.end', status: 'completed', error: null });
    expect(out.filter((o) => o.type === 'diagnostic').map((o) => o.diagnostic.code)).toEqual([
      'ACP_PERMISSION_REQUESTED',
    ]);
  });

  it('skips the history a session/load replays, ends a cancelled prompt failed, and reports an unanswered prompt', () => {
    const out = parse([
      JSON.stringify({ jsonrpc: '2.0', id: 0, result: { protocolVersion: 1 } }),
      update({ sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: 'old answer' } }),
      JSON.stringify({ jsonrpc: '2.0', id: 1, result: {} }),
      update({
        sessionUpdate: 'tool_call',
        toolCallId: 'call_1',
        title: 'sleep 600',
        kind: 'execute',
        status: 'pending',
        rawInput: { command: 'sleep 600' },
      }),
      JSON.stringify({ jsonrpc: '2.0', id: 2, result: { stopReason: 'cancelled' } }),
    ]);
    const events = out.filter((o) => o.type !== 'diagnostic');
    expect(events.some((e) => e.type === 'engine.assistant.message')).toBe(false);
    expect(events).toContainEqual({ type: 'engine.session', session_id: SID });
    expect(events).toContainEqual(
      expect.objectContaining({ type: 'engine.tool.call', kind: 'shell', input: { command: 'sleep 600' } }),
    );
    expect(events).toContainEqual(
      expect.objectContaining({ type: 'engine.tool.result', call_id: 'call_1', status: 'failed' }),
    );
    expect(events.at(-1)).toEqual({ type: 'engine.turn.end', status: 'failed', error: 'cancelled' });

    const cut = parse([
      JSON.stringify({ jsonrpc: '2.0', id: 0, result: { protocolVersion: 1 } }),
      JSON.stringify({ jsonrpc: '2.0', id: 1, result: { sessionId: SID } }),
      update({ sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: 'half' } }),
      'not json',
    ]);
    expect(cut.filter((o) => o.type === 'diagnostic').map((o) => o.diagnostic.code)).toEqual([
      'ACP_STDOUT_NOISE',
      'ACP_TURN_NOT_ENDED',
    ]);
  });

  it('a loaded session replaying its history after the load answered: skipped up to the line the prompt was sent after', () => {
    const lines = [
      JSON.stringify({ jsonrpc: '2.0', id: 0, result: { protocolVersion: 1 } }),
      JSON.stringify({ jsonrpc: '2.0', id: 1, result: { modes: {} } }),
      update({ sessionUpdate: 'user_message_chunk', content: { type: 'text', text: 'One' } }),
      update({ sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: 'First.' } }),
      update({ sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: 'Second.' } }),
      JSON.stringify({ jsonrpc: '2.0', id: 2, result: { stopReason: 'end_turn' } }),
    ];
    const finals = (out: ParserOutput[]) =>
      out.flatMap((o) => (o.type === 'engine.assistant.message' && o.final ? [o.text] : []));
    // Recorded: the prompt's line comes from the client's file.
    const recorded = createAcpParser({ promptAfterLine: 4 });
    expect(finals([...lines.flatMap((l) => recorded.line('stdout', l)), ...recorded.end()])).toEqual(['Second.']);
    // Live: the client says it after the parser saw the replay; the held updates are sorted then.
    const live = createAcpParser();
    const out = lines.slice(0, 4).flatMap((l) => live.line('stdout', l));
    live.promptSentAfterLine(4);
    out.push(...lines.slice(4).flatMap((l) => live.line('stdout', l)), ...live.end());
    expect(finals(out)).toEqual(['Second.']);
    // Not known at all: everything after the load's answer is the turn's.
    expect(finals(parse(lines))).toEqual(['First.Second.']);
  });

  it("an engine's notice while a tool runs (copilot's `Info:`) and an empty usage chunk (qwen's) are no message; the model's words after it are", async () => {
    const { loadTranslationAdapter } = await import('../../src/engines/registry.js');
    const { acpNotice } = await loadTranslationAdapter('copilot');
    // As copilot 1.0.102 and qwen 0.24.4 print them around a file write.
    const lines = [
      JSON.stringify({ jsonrpc: '2.0', id: 0, result: { protocolVersion: 1 } }),
      JSON.stringify({ jsonrpc: '2.0', id: 1, result: { sessionId: SID } }),
      update({ sessionUpdate: 'tool_call', toolCallId: 'call_1', title: 'Creating hello.txt', kind: 'edit' }),
      update({ sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: 'Info: /run/hello.txt' } }),
      update({
        sessionUpdate: 'agent_message_chunk',
        content: { type: 'text', text: '' },
        _meta: { usage: { inputTokens: 10, outputTokens: 5 } },
      }),
      update({ sessionUpdate: 'tool_call_update', toolCallId: 'call_1', status: 'completed', content: [diff] }),
      update({ sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: 'Info: done.' } }),
      JSON.stringify({ jsonrpc: '2.0', id: 2, result: { stopReason: 'end_turn' } }),
    ];
    const parser = createAcpParser({ notice: acpNotice });
    const out = [...lines.flatMap((line) => parser.line('stdout', line)), ...parser.end()];
    expect(out.filter((o) => o.type !== 'diagnostic').map((e) => e.type)).toEqual([
      'engine.session',
      'engine.turn.started',
      'engine.tool.call',
      'engine.tool.result',
      'engine.file.change',
      'engine.assistant.message',
      'engine.assistant.message',
      'engine.turn.end',
    ]);
    expect(out).toContainEqual({
      type: 'diagnostic',
      diagnostic: { code: 'ACP_ENGINE_NOTICE', message: 'the engine said: Info: /run/hello.txt', level: 'info' },
    });
    // An engine with no notice pattern: the same chunk is the model's message.
    const other = createAcpParser();
    const plain = lines.flatMap((line) => other.line('stdout', line));
    expect(plain.filter((o) => o.type === 'diagnostic')).toEqual([]);
    expect(plain.flatMap((o) => (o.type === 'engine.assistant.message' && o.final ? [o.text] : []))).toEqual([
      'Info: /run/hello.txt',
      'Info: done.',
    ]);
  });

  it('an error answer is a fatal engine error, and a failed turn once the session is open', () => {
    const out = parse([
      JSON.stringify({ jsonrpc: '2.0', id: 0, result: { protocolVersion: 1 } }),
      JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        error: {
          code: -32603,
          message: 'Internal error',
          data: { details: 'No previous sessions found for this project.' },
        },
      }),
    ]);
    expect(out).toContainEqual(
      expect.objectContaining({
        type: 'engine.error',
        fatal: true,
        message: expect.stringContaining('No previous sessions found'),
      }),
    );
    expect(out).toContainEqual(expect.objectContaining({ type: 'engine.turn.end', status: 'failed' }));
  });
});

describe('the permission policy', () => {
  const question = (kind: string, toolCallId = 'write_file__write_file_1_0') => ({
    toolCall: { toolCallId, title: 'Writing to hello.txt', kind },
    options: [
      { optionId: 'proceed_always', kind: 'allow_always' },
      { optionId: 'proceed_once', kind: 'allow_once' },
      { optionId: 'cancel', kind: 'reject_once' },
    ],
  });
  it('bypassPermissions allows once; normal and plan reject all but reads; the tool lists come first', () => {
    expect(decidePermission(question('edit'), DEFAULT_AGENT_OPTIONS)).toMatchObject({
      verdict: 'allow',
      optionId: 'proceed_once',
    });
    const normal = { ...DEFAULT_AGENT_OPTIONS, permissionMode: 'normal' as const };
    expect(decidePermission(question('edit'), normal)).toMatchObject({ verdict: 'reject', optionId: 'cancel' });
    expect(decidePermission(question('read'), { ...normal, permissionMode: 'plan' })).toMatchObject({
      verdict: 'allow',
    });
    expect(decidePermission(question('edit'), { ...normal, allowedTools: ['write_file'] })).toMatchObject({
      verdict: 'allow',
      rule: 'allowedTools names write_file',
    });
    expect(decidePermission(question('edit'), { ...DEFAULT_AGENT_OPTIONS, disallowedTools: ['edit'] })).toMatchObject({
      verdict: 'reject',
      rule: 'disallowedTools names edit',
    });
    // No reject option offered: the request is answered cancelled.
    expect(decidePermission({ ...question('execute'), options: [] }, normal)).toMatchObject({
      verdict: 'cancelled',
      optionId: null,
    });
  });
});

describe('refusals before any run exists', () => {
  async function refusal(engine: string, extra: Record<string, unknown>, model?: string): Promise<unknown> {
    try {
      for await (const _ of getProvider(engine).query({
        provider: engine,
        prompt: 'Hi.',
        ...(model ? { model } : {}),
        extra: { runRoot, ...extra },
      } as never)) {
        // nothing is expected
      }
    } catch (error) {
      return error;
    }
    return null;
  }
  it('an engine without an ACP mode, a transport that is not one, and a model over ACP', async () => {
    const iflow = await refusal('iflow', { transport: 'acp' });
    expect(isAgentHarnessError(iflow, 'ENGINE_CAPABILITY_UNAVAILABLE')).toBe(true);
    expect((iflow as { details?: unknown }).details).toMatchObject({ engine: 'iflow', capability: 'acp' });
    expect(isAgentHarnessError(await refusal('gemini', { transport: 'stdio' }), 'CONFIG_INVALID')).toBe(true);
    expect(
      isAgentHarnessError(
        await refusal('gemini', { transport: 'acp' }, 'gemini-2.5-pro'),
        'ENGINE_CAPABILITY_UNAVAILABLE',
      ),
    ).toBe(true);
    expect(fs.readdirSync(runRoot)).toEqual([]);
  });

  it('an engine whose ACP adapter is not installed, naming the package to install', async () => {
    const unregister = registerEngine({
      ...sixthEntry,
      adapter: async () => ({
        ...sixthEngine,
        acp: {
          via: { package: '@example/sixth-acp', bin: 'sixth-acp' },
          installed: () => {
            throw acpAdapterMissing(SIXTH_ID, '@example/sixth-acp', 'the package is not installed');
          },
          command: () => {
            throw new Error('an adapter that is not installed is never started');
          },
        },
      }),
    });
    try {
      const missing = await refusal(SIXTH_ID, { transport: 'acp' });
      expect(isAgentHarnessError(missing, 'ENGINE_CAPABILITY_UNAVAILABLE')).toBe(true);
      expect((missing as Error).message).toContain('(npm i -D @example/sixth-acp)');
      expect(fs.readdirSync(runRoot)).toEqual([]);
    } finally {
      unregister();
    }
  });
});

describe('the consistency report', () => {
  const input = (id: string, acp: unknown) => ({
    id,
    name: id,
    fullName: id,
    project: 'engine',
    file: 'providers-acp.engine.test.ts',
    state: 'passed' as const,
    durationMs: 1,
    retryCount: 0,
    flaky: false,
    errors: [],
    meta: undefined,
    acp: readAcpConformanceMeta({ [ACP_META_KEY]: acp }),
  });
  it("carries the tests' ACP checks as one row per engine, a failure kept, a check not reported skipped", () => {
    const report = buildConsistencyReport(
      [
        input('a', { engine: 'opencode', checks: { eventTypes: { status: 'pass' }, resume: { status: 'pass' } } }),
        input('b', { engine: 'gemini', checks: { resume: { status: 'fail', detail: 'session/load failed' } } }),
        input('c', { engine: 'gemini', checks: { resume: { status: 'pass' }, cancel: { status: 'pass' } } }),
        input('d', { engine: 'gemini', checks: { cancel: 'not an outcome' } }),
        input('e', undefined),
      ],
      'passed',
    );
    expect(report.acpConformance?.map((row) => row.engine)).toEqual(['gemini', 'opencode']);
    const gemini = report.acpConformance![0]!;
    expect(gemini.resume).toEqual({ status: 'fail', detail: 'session/load failed' });
    expect(gemini.cancel).toEqual({ status: 'pass' });
    expect(gemini.eventTypes).toMatchObject({ status: 'skipped' });
    const markdown = renderMarkdown(report);
    expect(markdown).toContain('## ACP against native');
    expect(markdown).toContain('| gemini | – | – | – | – | – | – | ✓ | ✗ |');
    expect(markdown).toContain('- gemini, resume: session/load failed');
    expect(buildConsistencyReport([input('e', undefined)], 'passed').acpConformance).toBeUndefined();
  });
});
