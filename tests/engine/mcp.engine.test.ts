/**
 * MCP servers under the default isolation, on every engine of the registry: an HTTP MCP server on the host's
 * 127.0.0.1 (in this test process) is reached through the network namespace with its bearer token, which no audit
 * file holds; a URL off loopback is refused before the run; a stdio server that is not ready in time is reported.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { getProvider } from '../../src/providers/index.js';
import type { AgentEvent } from '../../src/protocol/index.js';
import { attemptAuditPaths } from '../../src/core/audit-files.js';
import { expectCompleteAudit } from '../helpers/audit.js';
import { engineAdapters, missingReasons, registryEngines } from '../helpers/engines.js';
import { startHttpMcpServer } from '../helpers/mcp-http-server.js';
import { scaled } from '../helpers/load-scaled.js';

/** The stdio MCP server fixture (official TypeScript SDK): one `echo` tool; ECHO_START_DELAY_MS delays its start. */
const ECHO_SERVER = path.resolve('fixtures/mcp/echo-server.mjs');

const runRoot = fs.mkdtempSync(path.join(os.tmpdir(), 'ah-mcp-'));
afterAll(() => fs.rmSync(runRoot, { recursive: true, force: true }));

const script = (...turns: object[]) => ({ version: 1, turns });
const MISSING = await missingReasons();
const ADAPTERS = await engineAdapters();

/** Every file under `dir`, recursively. */
function filesUnder(dir: string): string[] {
  return fs
    .readdirSync(dir, { withFileTypes: true })
    .flatMap((entry) => (entry.isDirectory() ? filesUnder(path.join(dir, entry.name)) : [path.join(dir, entry.name)]));
}

describe.for(registryEngines())('%s MCP', (engine) => {
  const missing = MISSING[engine];
  beforeEach(({ skip }) => {
    if (missing) skip(missing);
  });

  it('an HTTP MCP server on the host loopback is called through the namespace, with its bearer token, never logged', async () => {
    const token = `ah-bearer-${engine}-5c2e91f0`;
    const server = await startHttpMcpServer(token);
    const events: AgentEvent[] = [];
    try {
      for await (const event of getProvider(engine).query({
        provider: engine,
        prompt: 'Call the echo tool.',
        mcpServers: [{ name: 'web', url: server.url, bearerToken: token }],
        extra: {
          runRoot,
          script: script(
            { type: 'mcp_tool', server: 'web', tool: 'echo', arguments: { text: 'over-http' } },
            { type: 'final', text: 'Echoed.' },
          ),
        },
      }))
        events.push(event);
    } finally {
      await server.close();
    }
    const last = events.at(-1)!;
    const { runDir } = last.diagnostics as { runDir: string };
    const audit = attemptAuditPaths(runDir, 1);
    const why = () =>
      `requests: ${JSON.stringify(server.requests)}; last event: ${JSON.stringify(last).slice(0, 1500)}; stderr: ${fs.readFileSync(audit.stderr, 'utf8').slice(-1500)}`;
    // The server saw the engine, always with the right token, and the call.
    expect(server.requests.length, why()).toBeGreaterThan(0);
    expect(
      server.requests.every((r) => r.authorized),
      why(),
    ).toBe(true);
    expect(server.calls, why()).toEqual(['over-http']);
    expect(last).toMatchObject({ type: 'complete', result: { success: true } });
    const meta = expectCompleteAudit(audit);
    // Under the default isolation: the engine's own network namespace.
    expect(meta.isolation).toMatchObject({ network: 'namespace' });
    // The tool's result went back to the model.
    const requests = fs.readFileSync(audit.modelRequests, 'utf8');
    expect(requests).toContain('echo: over-http');
    // The token is in no audit file (meta, isolation record, env, argv, streams, requests).
    for (const file of filesUnder(path.join(runDir, '.audit')))
      expect(fs.readFileSync(file, 'latin1').includes(token), file).toBe(false);
  });

  it('an HTTP MCP server off loopback is refused before the run, never connected to', async () => {
    const before = fs.readdirSync(runRoot).length;
    const query = async (): Promise<void> => {
      for await (const _event of getProvider(engine).query({
        provider: engine,
        prompt: 'Call the echo tool.',
        // TEST-NET-1 (RFC 5737): nothing is ever connected to.
        mcpServers: [{ name: 'far', url: 'http://192.0.2.1:8080/mcp' }],
        extra: { runRoot, script: script({ type: 'final', text: 'Never.' }) },
      }));
    };
    await expect(query()).rejects.toMatchObject({ code: 'MCP_SERVER_UNREACHABLE' });
    // No run directory was made for it.
    expect(fs.readdirSync(runRoot).length).toBe(before);
  });

  /** Runs a query whose script calls `echo` of a stdio server starting after `delayMs`, waited for `timeoutMs`. */
  const slowServerQuery = async (delayMs: number, timeoutMs?: number) => {
    const events: AgentEvent[] = [];
    for await (const event of getProvider(engine).query({
      provider: engine,
      prompt: 'Call the echo tool.',
      mcpServers: [
        {
          name: 'slow',
          command: [process.execPath, ECHO_SERVER],
          env: { ECHO_START_DELAY_MS: String(delayMs) },
          ...(timeoutMs ? { startupTimeoutMs: timeoutMs } : {}),
        },
      ],
      extra: {
        runRoot,
        script: script(
          { type: 'mcp_tool', server: 'slow', tool: 'echo', arguments: { text: 'late' } },
          { type: 'final', text: 'Echoed.' },
        ),
      },
    }))
      events.push(event);
    const last = events.at(-1)!;
    const { runDir } = last.diagnostics as { runDir: string };
    const audit = attemptAuditPaths(runDir, 1);
    const notReady = fs
      .readFileSync(audit.rasp, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line))
      .filter((e) => e.data.type === 'diagnostic' && e.data.diagnostic.code === 'MCP_SERVER_NOT_READY');
    return { last, runDir, audit, notReady };
  };

  it('a stdio MCP server that starts slowly is waited for before the first turn: its tool is called, no diagnostic', async () => {
    // Slower to start than an engine that does not wait takes to its first model request.
    const { last, runDir, audit, notReady } = await slowServerQuery(3000);
    const why = () =>
      `last event: ${JSON.stringify(last).slice(0, 800)}; stdout: ${fs.readFileSync(audit.stdout, 'utf8').slice(0, 1500)}`;
    expect(notReady, why()).toEqual([]);
    expect(last, why()).toMatchObject({ type: 'complete', result: { success: true } });
    expect(fs.readFileSync(path.join(runDir, 'mcp-calls.log'), 'utf8')).toContain('late');
  });

  it('a stdio MCP server not ready within its startup timeout fails the attempt naming it: MCP_SERVER_NOT_READY, or the watchdog where the engine waits', async () => {
    if (ADAPTERS[engine]?.mcpStartupUnbounded) {
      // The engine waits for its servers whatever `startupTimeoutMs` says: the harness's watchdog bounds the wait
      // (the servers' timeout plus the engine's boot, 8 s here rather than 30) and ends the attempt naming the server.
      vi.stubEnv('AGENT_HARNESS_MCP_TURN_GRACE_MS', '8000');
      try {
        const { last, audit } = await slowServerQuery(60_000, 2000);
        const meta = expectCompleteAudit(audit);
        const why = () => `completion: ${JSON.stringify(meta.completion)}; last event: ${JSON.stringify(last)}`;
        expect(meta.completion, why()).toMatchObject({ state: 'failed', code: 'MCP_SERVER_STARTUP_STALLED' });
        const errors = last.type === 'complete' ? (last.result?.errors ?? []) : [];
        expect(errors.join('\n'), why()).toContain('MCP server "slow"');
      } finally {
        vi.unstubAllEnvs();
      }
      return;
    }
    const { last, audit, notReady } = await slowServerQuery(60_000, 2000);
    const why = () =>
      `last event: ${JSON.stringify(last).slice(0, 800)}; stdout: ${fs.readFileSync(audit.stdout, 'utf8').slice(0, 1500)}; stderr: ${fs.readFileSync(audit.stderr, 'utf8').slice(-1500)}`;
    expect(notReady.length, why()).toBe(1);
    expect(notReady[0].data.diagnostic.message).toContain('"slow"');
    expect(last, why()).toMatchObject({ type: 'complete', result: { success: false } });
    const meta = expectCompleteAudit(audit);
    expect(meta.completion).toMatchObject({ state: 'failed', code: 'MCP_SERVER_NOT_READY' });
  });

  it('a stdio MCP server that floods stdout never leaves the query hanging: the engine ends, or the harness ends it with MCP_SERVER_STARTUP_STALLED naming the server', {
    timeout: scaled(240_000),
  }, async () => {
    // JSON-RPC notifications forever, never an answer to `initialize` (claude and opencode keep reading it).
    const flood = ['sh', '-c', `exec yes '{"jsonrpc":"2.0","method":"notifications/x"}'`];
    const events: AgentEvent[] = [];
    // The engine's boot past its servers' timeout: 8 s here rather than 30 (every engine boots in 2–6 s).
    vi.stubEnv('AGENT_HARNESS_MCP_TURN_GRACE_MS', '8000');
    try {
      for await (const event of getProvider(engine).query({
        provider: engine,
        prompt: 'hi',
        mcpServers: [{ name: 'flood', command: flood, startupTimeoutMs: 1000 }],
        extra: { runRoot, script: script({ type: 'final', text: 'Done.' }) },
      }))
        events.push(event);
    } finally {
      vi.unstubAllEnvs();
    }
    const last = events.at(-1)!;
    expect(last.type).toBe('complete');
    const { runDir } = last.diagnostics as { runDir: string };
    const audit = attemptAuditPaths(runDir, 1);
    const meta = expectCompleteAudit(audit);
    const why = () =>
      `completion: ${JSON.stringify(meta.completion)}; stdout: ${fs.readFileSync(audit.stdout, 'utf8').slice(0, 800)}`;
    // Ended by the engine itself (codex: its required server failed; gemini, sometimes claude: a turn without it),
    // or by the harness when the turn never started.
    if (meta.completion?.code === 'MCP_SERVER_STARTUP_STALLED') {
      expect(meta.completion?.state, why()).toBe('failed');
      expect(last, why()).toMatchObject({ type: 'complete', result: { success: false } });
      const errors = last.type === 'complete' ? (last.result?.errors ?? []) : [];
      expect(errors.join('\n'), why()).toContain('MCP server "flood"');
    } else expect(meta.completion?.code, why()).not.toBe('ENGINE_TIMEOUT');
  });
});
