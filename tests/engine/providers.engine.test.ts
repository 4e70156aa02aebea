/**
 * The providers (seed 003) over the real CLIs on the scripted model: events stream while the engine runs, a
 * session resumes by id, an abort ends the stream with an error event and a complete audit and leaves no process,
 * MCP servers are started and their tools called, and the permission mode is the engine's own.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { getProvider } from '../../src/providers/index.js';
import { AgentEventSchema, type AgentEvent, type EngineId } from '../../src/protocol/index.js';
import { expectCompleteAudit } from '../helpers/audit.js';
import { attemptAuditPaths } from '../../src/core/audit-files.js';
import { missingReasons, registryEngines } from '../helpers/engines.js';
import { eventually, pidsWithMarker, uniqueSleepSeconds } from '../helpers/processes.js';

/** Each engine's own shell tool, as its requests name it. */
const SHELL_TOOL: Partial<Record<EngineId, string>> = {
  claude: 'Bash',
  gemini: 'run_shell_command',
  opencode: 'bash',
  copilot: 'bash',
};

/** The tool names a model request offers (Anthropic/OpenAI `name`, Chat `function.name`, Gemini declarations). */
function offeredToolNames(body: { tools?: unknown[] }): string[] {
  return (body.tools ?? []).flatMap((tool) => {
    const t = tool as { name?: string; function?: { name?: string }; functionDeclarations?: Array<{ name?: string }> };
    return [t.name, t.function?.name, ...(t.functionDeclarations ?? []).map((d) => d.name)].filter(
      (n): n is string => typeof n === 'string',
    );
  });
}

/** The stdio MCP server fixture (official TypeScript SDK): one `echo` tool that logs its calls. */
const ECHO_SERVER = path.resolve('fixtures/mcp/echo-server.mjs');

const runRoot = fs.mkdtempSync(path.join(os.tmpdir(), 'ah-providers-'));
afterAll(() => fs.rmSync(runRoot, { recursive: true, force: true }));

const script = (...turns: object[]) => ({ version: 1, turns });
const MISSING = await missingReasons();

// Every engine of the registry; one whose executable is not found here (iflow) is skipped with that reason.
describe.for(registryEngines())('%s provider', (engine) => {
  const missing = MISSING[engine];
  beforeEach(({ skip }) => {
    if (missing) skip(missing);
  });

  it('streams session, tool_use, tool_result and text while the engine runs, then complete with success; resumes by session id', async () => {
    const events: AgentEvent[] = [];
    let statusAtFirstMessage: string | null = null;
    const extra = {
      runRoot,
      script: script(
        { type: 'shell', command: "printf 'one\\n' > one.txt" },
        { type: 'final', text: 'Wrote one.txt.' },
        { type: 'final', text: 'Second turn.' },
      ),
    };
    for await (const event of getProvider(engine).query({ provider: engine, prompt: 'Write one.txt.', extra })) {
      AgentEventSchema.parse(event);
      if (event.type === 'message' && statusAtFirstMessage === null) {
        // The first message arrives before the attempt is over: its meta still says running.
        const runDir = fs
          .readdirSync(runRoot)
          .map((d) => path.join(runRoot, d))
          .find((d) => fs.existsSync(path.join(d, '.audit', 'meta.1.json')) && d.includes(`-${engine}-`));
        statusAtFirstMessage = runDir
          ? JSON.parse(fs.readFileSync(path.join(runDir, '.audit', 'meta.1.json'), 'utf8')).status
          : 'no run dir';
      }
      events.push(event);
    }
    expect(statusAtFirstMessage).toBe('running');
    expect(events[0]?.type).toBe('session');
    const kinds = events.filter((e) => e.type === 'message').map((e) => e.content?.kind);
    expect(kinds).toEqual(expect.arrayContaining(['tool_use', 'tool_result', 'text']));
    expect(kinds.indexOf('tool_use')).toBeLessThan(kinds.indexOf('tool_result'));
    const complete = events.at(-1)!;
    expect(complete).toMatchObject({ type: 'complete', result: { success: true } });
    const sessionId = events[0]!.sessionId!;
    const { runDir } = complete.diagnostics as { runDir: string };
    expect(fs.readFileSync(path.join(runDir, 'one.txt'), 'utf8')).toBe('one\n');
    expectCompleteAudit(attemptAuditPaths(runDir, 1));

    const resumed: AgentEvent[] = [];
    for await (const event of getProvider(engine).query({
      provider: engine,
      prompt: 'And now?',
      resumeSessionId: sessionId,
      extra: { runRoot },
    }))
      resumed.push(event);
    expect(resumed.at(-1)).toMatchObject({ type: 'complete', sessionId, result: { success: true } });
    expect((resumed.at(-1)!.diagnostics as { runDir: string }).runDir).toBe(runDir);
    expectCompleteAudit(attemptAuditPaths(runDir, 2));
  });

  it('an abort during a tool call ends the stream with an error event, the audit complete, no process left', async () => {
    const controller = new AbortController();
    const events: AgentEvent[] = [];
    const sleeper = `sleep ${uniqueSleepSeconds()}`;
    const extra = {
      runRoot,
      script: script(
        { type: 'shell', command: `setsid ${sleeper} >/dev/null 2>&1 </dev/null & ${sleeper}` },
        { type: 'final', text: 'done' },
      ),
    };
    // Abort once the agent's sleep runs (not on the tool_use event: opencode prints a tool call only when it ended).
    const sleeping = eventually(() => pidsWithMarker(sleeper).length > 0, 120_000).then((running) => {
      if (running) controller.abort();
      return running;
    });
    for await (const event of getProvider(engine).query({
      provider: engine,
      prompt: 'Sleep.',
      signal: controller.signal,
      extra,
    }))
      events.push(event);
    expect(await sleeping, `the agent's sleep never ran: ${JSON.stringify(events.at(-1))}`).toBe(true);
    expect(events.at(-1)).toMatchObject({ type: 'error' });
    expect(events.some((e) => e.type === 'complete')).toBe(false);
    const { runId, runDir } = events.at(-1)!.diagnostics as { runId: string; runDir: string };
    expect(runDir).toBe(path.join(runRoot, runId));
    const meta = expectCompleteAudit(attemptAuditPaths(path.join(runRoot, runId), 1));
    expect(meta.completion).toMatchObject({ state: 'failed', code: 'ENGINE_CANCELED' });
    // The agent's sleep and its setsid'd twin went with the attempt's PID namespace.
    expect(pidsWithMarker(sleeper)).toEqual([]);
  });

  it('starts an MCP server from mcpServers, and the agent calls its tool and gets the result', async () => {
    const events: AgentEvent[] = [];
    const mcpServers = [{ name: 'echo', command: [process.execPath, ECHO_SERVER] }];
    const extra = {
      runRoot,
      script: script(
        { type: 'mcp_tool', server: 'echo', tool: 'echo', arguments: { text: 'ping' } },
        { type: 'final', text: 'Echoed.' },
      ),
    };
    for await (const event of getProvider(engine).query({
      provider: engine,
      prompt: 'Call the echo tool.',
      mcpServers,
      extra,
    }))
      events.push(event);
    expect(events.at(-1)).toMatchObject({ type: 'complete', result: { success: true } });
    const kinds = events.filter((e) => e.type === 'message').map((e) => e.content?.kind);
    expect(kinds).toEqual(expect.arrayContaining(['tool_use', 'tool_result']));
    const { runDir } = events.at(-1)!.diagnostics as { runDir: string };
    // The engine spawned the server (it logged the call in its working directory, the run dir) ...
    const why = () =>
      `no MCP call logged; tool results: ${JSON.stringify(events.filter((e) => e.content?.kind === 'tool_result').map((e) => e.content?.raw)).slice(0, 1500)}; stderr: ${fs.readFileSync(attemptAuditPaths(runDir, 1).stderr, 'utf8').slice(-1500)}`;
    expect(fs.existsSync(path.join(runDir, 'mcp-calls.log')), why()).toBe(true);
    expect(fs.readFileSync(path.join(runDir, 'mcp-calls.log'), 'utf8')).toBe(
      `${JSON.stringify({ tool: 'echo', text: 'ping' })}\n`,
    );
    // ... and sent the tool's result back to the model.
    const requests = fs
      .readFileSync(attemptAuditPaths(runDir, 1).modelRequests, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line));
    expect(
      requests.filter((r) => r.response_kind !== 'side').some((r) => JSON.stringify(r.body).includes('echo: ping')),
    ).toBe(true);
    const meta = expectCompleteAudit(attemptAuditPaths(runDir, 1));
    expect(JSON.stringify(meta.agent_options)).toContain('echo');
    // Options hold for the attempt only: gemini's workspace settings no longer name the server.
    const geminiSettings = path.join(runDir, '.gemini', 'settings.json');
    if (fs.existsSync(geminiSettings))
      expect(JSON.parse(fs.readFileSync(geminiSettings, 'utf8')).mcpServers).toBeUndefined();
  });

  it('systemPrompt reaches the model, and a disallowed tool is no longer offered to it', async () => {
    const marker = 'AH-SYSTEM-PROMPT-7d1e';
    const extra = { runRoot, script: script({ type: 'final', text: 'Ok.' }) };
    const disallowedTools = SHELL_TOOL[engine] && engine !== 'codex' ? [SHELL_TOOL[engine]!] : [];
    let last: AgentEvent | undefined;
    for await (const event of getProvider(engine).query({
      provider: engine,
      prompt: 'Hello.',
      systemPrompt: `You are terse. ${marker}`,
      disallowedTools,
      extra,
    }))
      last = event;
    expect(last).toMatchObject({ type: 'complete', result: { success: true } });
    const { runDir } = last!.diagnostics as { runDir: string };
    const requests = fs
      .readFileSync(attemptAuditPaths(runDir, 1).modelRequests, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line))
      .filter((r) => r.response_kind !== 'side');
    expect(requests.length).toBeGreaterThan(0);
    expect(JSON.stringify(requests[0].body)).toContain(marker);
    // codex has no deny list (refused, see the contract tests); the others drop the tool from the request.
    if (disallowedTools.length > 0) expect(offeredToolNames(requests[0].body)).not.toContain(disallowedTools[0]);
    if (disallowedTools.length > 0) expect(offeredToolNames(requests[0].body).length).toBeGreaterThan(0);
  });

  it('permissionMode plan keeps the agent from writing; bypassPermissions lets it', async () => {
    const write = script({ type: 'shell', command: "printf 'x' > plan.txt" }, { type: 'final', text: 'Tried.' });
    const runDirOf = async (permissionMode: 'plan' | 'bypassPermissions'): Promise<string> => {
      let last: AgentEvent | undefined;
      for await (const event of getProvider(engine).query({
        provider: engine,
        prompt: 'Write plan.txt.',
        permissionMode,
        extra: { runRoot, script: write },
      }))
        last = event;
      expect(last?.type).toBe('complete');
      return (last!.diagnostics as { runDir: string }).runDir;
    };
    expect(fs.existsSync(path.join(await runDirOf('plan'), 'plan.txt'))).toBe(false);
    expect(fs.readFileSync(path.join(await runDirOf('bypassPermissions'), 'plan.txt'), 'utf8')).toBe('x');
  });
});
