/**
 * The codex provider checked against a client nobody here wrote (issue 10): `@openai/codex-sdk` drives the same
 * pinned codex binary (`codexPathOverride`) in its own temporary HOME/CODEX_HOME, against its own scripted model
 * server with the same script. Both must report a session, the same commands, the same final message, the same
 * usage and success. One server per side, so neither can consume the other's turns.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Codex, type ThreadEvent } from '@openai/codex-sdk';
import { afterAll, describe, expect, it } from 'vitest';
import { parseModelScript, type ModelServer } from '../../src/model/index.js';
import { startModelServer } from '../../src/engines/model-server.js';
import { getProvider } from '../../src/public/providers.js';
import type { AgentEvent } from '../../src/protocol/index.js';
import {
  createCodexSdkHome,
  listCodexSessionFiles,
  PINNED_CODEX_BIN,
  type CodexSdkHome,
} from '../helpers/codex-sdk.js';

const SCRIPT = {
  version: 1,
  turns: [
    { type: 'shell', command: "printf 'from codex\\n' > sdk.txt" },
    { type: 'final', text: 'Wrote sdk.txt.' },
  ],
};
const PROMPT = 'Write sdk.txt.';
/** `final` turns end with the done marker line (src/model/script.ts); neither client strips it. */
const FINAL_TEXT = 'Wrote sdk.txt.\n__SKILL_DONE__';

const runRoot = fs.mkdtempSync(path.join(os.tmpdir(), 'ah-codex-sdk-provider-'));
const servers: ModelServer[] = [];
const homes: CodexSdkHome[] = [];
afterAll(async () => {
  await Promise.all(servers.map((s) => s.close()));
  for (const home of homes) home.cleanup();
  fs.rmSync(runRoot, { recursive: true, force: true });
});

/** A thread of the SDK on the pinned binary, with its own model server and home. */
async function startSdkThread() {
  // The server takes a parsed script: parsing applies `final`'s `done: true` default (the provider parses its own).
  const server = await startModelServer({ script: parseModelScript(SCRIPT) });
  servers.push(server);
  const home = createCodexSdkHome(server.url);
  homes.push(home);
  const codex = new Codex({ codexPathOverride: PINNED_CODEX_BIN, env: home.env, config: home.config });
  const thread = codex.startThread({
    workingDirectory: home.workDir,
    skipGitRepoCheck: true,
    sandboxMode: 'workspace-write',
    approvalPolicy: 'never',
  });
  return { server, home, thread };
}

async function queryProvider(): Promise<{ events: AgentEvent[]; complete: AgentEvent; runDir: string }> {
  const events: AgentEvent[] = [];
  for await (const event of getProvider('codex').query({
    provider: 'codex',
    prompt: PROMPT,
    extra: { script: SCRIPT, runRoot },
  }))
    events.push(event);
  const complete = events.at(-1)!;
  expect(complete, `provider events: ${JSON.stringify(events)}`).toMatchObject({ type: 'complete' });
  return { events, complete, runDir: (complete.diagnostics as { runDir: string }).runDir };
}

type CodexItem = { type?: string; command?: string; text?: string };
/** The codex item each provider message of `kind` carries (`raw` is codex's own `item.*` line). */
const providerItems = (events: AgentEvent[], kind: string): CodexItem[] =>
  events
    .filter((e) => e.type === 'message' && e.content?.kind === kind)
    .map((e) => (e.content!.raw as { item: CodexItem }).item);

/** The SDK's ThreadEvents in the provider's AgentEvent vocabulary (src/providers/events.ts, src/engines/codex/parse.ts). */
function toProviderKinds(events: readonly ThreadEvent[]): string[] {
  return events.flatMap((e): string[] => {
    if (e.type === 'thread.started') return ['session'];
    if (e.type === 'turn.completed' || e.type === 'turn.failed') return ['complete'];
    if (e.type !== 'item.started' && e.type !== 'item.completed') return [];
    const tool =
      e.item.type === 'command_execution' || e.item.type === 'file_change' || e.item.type === 'mcp_tool_call';
    if (tool) return e.type === 'item.started' ? ['message:tool_use'] : ['message:tool_result'];
    if (e.type === 'item.completed' && e.item.type === 'agent_message') return ['message:text'];
    if (e.type === 'item.completed' && e.item.type === 'reasoning') return ['message:thinking'];
    return [];
  });
}

const skipReason = fs.existsSync(PINNED_CODEX_BIN)
  ? null
  : `the pinned codex launcher ${PINNED_CODEX_BIN} is missing; \`npm ci\` installs @openai/codex 0.169.0`;

describe.skipIf(skipReason !== null)('codex provider vs @openai/codex-sdk on the pinned binary', () => {
  it('thread.run(): same final response, commands, usage and success; both sessions real and distinct', async () => {
    const [sdk, provider] = await Promise.all([startSdkThread(), queryProvider()]);
    const turn = await sdk.thread.run(PROMPT);

    // Sessions: non-empty and distinct; the SDK's is the thread codex persisted in the temporary CODEX_HOME.
    const sessionEvents = provider.events.filter((e) => e.type === 'session');
    expect(sessionEvents).toHaveLength(1);
    expect(sdk.thread.id).toMatch(/\S/);
    expect(sessionEvents[0]!.sessionId).toMatch(/\S/);
    expect(provider.complete.sessionId).toBe(sessionEvents[0]!.sessionId);
    expect(sessionEvents[0]!.sessionId).not.toBe(sdk.thread.id);
    expect(listCodexSessionFiles(sdk.home.codexHome).filter((f) => f.includes(sdk.thread.id!))).toHaveLength(1);

    // Final message: the SDK's finalResponse is the provider's last `text` message, done marker and all.
    expect(turn.finalResponse).toBe(FINAL_TEXT);
    expect(providerItems(provider.events, 'text').map((i) => i.text)).toEqual([FINAL_TEXT]);

    // Commands: as many command_execution items as tool_use events, the same command lines.
    const sdkCommands = turn.items.flatMap((i) => (i.type === 'command_execution' ? [i.command] : []));
    expect(sdkCommands).toHaveLength(1);
    // codex runs the model's command in a login shell with its own quoting (`/bin/bash -lc "…"`), on both sides.
    expect(sdkCommands[0]).toMatch(/^\/bin\/(ba)?sh -lc .*printf 'from codex.*' > sdk\.txt/);
    expect(providerItems(provider.events, 'tool_use').map((i) => i.command)).toEqual(sdkCommands);

    // Usage: the scripted server's counts, reported by both (the provider drops reasoning_output_tokens).
    expect(turn.usage).not.toBeNull();
    expect(provider.complete.result?.usage).toEqual({
      inputTokens: turn.usage!.input_tokens,
      outputTokens: turn.usage!.output_tokens,
      cachedTokens: turn.usage!.cached_input_tokens,
    });

    // Completion: run() resolved (it throws on turn.failed); the provider says success, by the done marker.
    expect(provider.complete.result).toMatchObject({ success: true });
    expect(provider.complete.result?.errors).toBeUndefined();
    expect(provider.complete.diagnostics).toMatchObject({ completion: { state: 'completed', reason: 'done_marker' } });
    expect(fs.readFileSync(path.join(sdk.home.workDir, 'sdk.txt'), 'utf8')).toBe('from codex\n');
    expect(fs.readFileSync(path.join(provider.runDir, 'sdk.txt'), 'utf8')).toBe('from codex\n');

    // The SDK side stayed on 127.0.0.1: its server played the whole script and was asked for nothing else.
    expect(sdk.server.requests.map((r) => r.response_kind).filter((k) => k !== 'side' && k !== 'probe')).toEqual([
      'shell',
      'final',
    ]);
    expect(sdk.server.egress).toEqual([]);
  });

  it("thread.runStreamed(): the same event sequence, each provider message carrying the SDK's item", async () => {
    const [sdk, provider] = await Promise.all([startSdkThread(), queryProvider()]);
    const events: ThreadEvent[] = [];
    const { events: stream } = await sdk.thread.runStreamed(PROMPT);
    for await (const event of stream) events.push(event);

    const providerKinds = provider.events.map((e) => (e.type === 'message' ? `message:${e.content?.kind}` : e.type));
    expect(toProviderKinds(events)).toEqual([
      'session',
      'message:tool_use',
      'message:tool_result',
      'message:text',
      'complete',
    ]);
    expect(providerKinds).toEqual(toProviderKinds(events));

    // Item by item: same ids (codex numbers them per turn), commands, outputs, exit codes and text.
    const sdkItems = (type: 'item.started' | 'item.completed') =>
      events.flatMap((e) => (e.type === type ? [e.item] : []));
    expect(providerItems(provider.events, 'tool_use')).toEqual(
      sdkItems('item.started').filter((i) => i.type === 'command_execution'),
    );
    expect(providerItems(provider.events, 'tool_result')).toEqual(
      sdkItems('item.completed').filter((i) => i.type === 'command_execution'),
    );
    expect(providerItems(provider.events, 'text')).toEqual(
      sdkItems('item.completed').filter((i) => i.type === 'agent_message'),
    );
    expect(sdkItems('item.completed').find((i) => i.type === 'command_execution')).toMatchObject({
      exit_code: 0,
      status: 'completed',
    });
    expect(events.find((e) => e.type === 'thread.started')).toMatchObject({ thread_id: sdk.thread.id });
  });
});

if (skipReason !== null) {
  describe('codex provider vs @openai/codex-sdk', () => {
    it.skip(`skipped: ${skipReason}`, () => undefined);
  });
}
