/**
 * MCP under isolation, without an engine: HTTP servers on the host's loopback are forwarded into the attempt's
 * network namespace beside the model server (each port to its own host server, in both ways an init starts); a URL
 * off loopback is refused before the run (MCP_SERVER_UNREACHABLE) where the namespace would make it unreachable; the
 * readiness diagnostic and the verdict it forces; the provider's per-query isolation. No packet leaves the machine.
 */
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assertMcpReachable, mcpServersCalled } from '../../src/core/mcp-reach.js';
import { mcpTurnStartGraceMs, startMcpStartupWatchdog } from '../../src/core/mcp-startup-watchdog.js';
import { createClaudeParser } from '../../src/engines/claude/parse.js';
import { createCodexParser } from '../../src/engines/codex/parse.js';
import { createGeminiParser } from '../../src/engines/gemini/parse.js';
import { geminiWorkspacePathProblem } from '../../src/engines/gemini/workspace-path.js';
import { mcpNotReadyDiagnostic, withMcpReadiness } from '../../src/engines/mcp-readiness.js';
import type { EngineParser, ParserOutput } from '../../src/engines/engine.js';
import { missingMcpToolCommand, parseModelScript, requestWorkingDirectory } from '../../src/model/script.js';
import { parseProviderConfig } from '../../src/providers/config.js';
import { RASP_VERSION, type RaspData, type RaspEvent } from '../../src/protocol/index.js';
import { loopbackTarget, openIsolation } from '../../src/runtime/isolation/attempt-isolation.js';
import { probeNamespaces } from '../../src/runtime/isolation/probe.js';
import type { ProcessResult } from '../../src/runtime/process-result.js';
import { runProcess, superviseSplit } from '../../src/runtime/process.js';
import { judgeCompletion } from '../../src/translate/completion.js';

const support = probeNamespaces();
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'ah-mcp-iso-'));
const servers: http.Server[] = [];

/** An HTTP server on the host's `host` (127.0.0.1 unless said) that answers `name`. */
async function serve(name: string, host = '127.0.0.1'): Promise<number> {
  const server = http.createServer((_req, res) => res.end(name));
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  servers.push(server);
  return (server.address() as AddressInfo).port;
}

let modelPort = 0;
let mcpPort = 0;
let otherPort = 0;
let v6Port = 0;
beforeAll(async () => {
  modelPort = await serve('model');
  mcpPort = await serve('mcp');
  otherPort = await serve('other');
  v6Port = await serve('v6', '::1');
});
afterAll(async () => {
  await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))));
  fs.rmSync(tmp, { recursive: true, force: true });
});

describe.skipIf(!support.available).each(['wrap', 'prestart'] as const)(
  'forwards in the namespace (init via %s)',
  (via) => {
    it("reaches the model and every HTTP MCP server on the host's loopback (127.0.0.1, localhost, [::1]), each on its own port", async () => {
      const isolation = await openIsolation({
        mode: 'require',
        modelUrl: `http://127.0.0.1:${modelPort}`,
        forwardUrls: [
          `http://127.0.0.1:${mcpPort}/mcp`,
          `http://localhost:${otherPort}/mcp`,
          `http://[::1]:${v6Port}/mcp`,
          // The model's own port again, and a URL off loopback: neither is forwarded a second time (nor connected).
          `http://127.0.0.1:${modelPort}/mcp`,
          'http://192.0.2.1:8080/mcp',
        ],
        support,
      });
      const urls = [
        ...[modelPort, mcpPort].map((p) => `http://127.0.0.1:${p}/`),
        `http://localhost:${otherPort}/`,
        `http://[::1]:${v6Port}/`,
      ];
      const script = `Promise.all(${JSON.stringify(urls)}.map((u) => fetch(u).then((r) => r.text()))).then((t) => console.log(t.join(' ')))`;
      const chunks: Buffer[] = [];
      const supervise = { onChunk: (_s: string, chunk: Buffer) => chunks.push(chunk), killGraceMs: 500 };
      const command = { file: process.execPath, args: ['-e', script], env: { PATH: '/usr/bin:/bin' }, cwd: tmp };
      try {
        let result: ProcessResult;
        if (via === 'prestart') {
          isolation.prestart('ignore');
          result = await superviseSplit(isolation.launch(command)!, supervise);
        } else {
          const wrapped = isolation.wrap(command);
          result = await runProcess({ ...wrapped, cwd: tmp, stdin: 'ignore', ...supervise });
        }
        result = await isolation.settle(result);
        expect(isolation.record.network).toBe('namespace');
        expect(Buffer.concat(chunks).toString('utf8').trim(), JSON.stringify(result)).toBe('model mcp other v6');
      } finally {
        await isolation.close();
      }
    });
  },
);

describe('HTTP MCP reach', () => {
  it('takes 127.0.0.1, localhost and [::1] as the host loopback, nothing else', () => {
    expect(loopbackTarget('http://127.0.0.1:81/mcp')).toEqual({ host: '127.0.0.1', port: 81 });
    expect(loopbackTarget('http://localhost:82')).toEqual({ host: 'localhost', port: 82 });
    expect(loopbackTarget('http://[::1]:83/x')).toEqual({ host: '::1', port: 83 });
    expect(loopbackTarget('https://localhost/x')).toEqual({ host: 'localhost', port: 443 });
    expect(loopbackTarget('http://192.0.2.1:8080/mcp')).toBeNull();
    expect(loopbackTarget('http://127.0.0.2:8080/mcp')).toBeNull();
  });

  it('refuses a URL off loopback in scripted mode under namespaces; live mode and isolation off keep the host network', () => {
    const far = [{ name: 'far', url: 'http://192.0.2.1:8080/mcp' }];
    const near = [
      { name: 'near', url: 'http://127.0.0.1:9/mcp' },
      { name: 'stdio', command: ['node'] },
    ];
    for (const mode of ['auto', 'require', null] as const)
      expect(() => assertMcpReachable(far, 'scripted', mode)).toThrow(
        expect.objectContaining({ code: 'MCP_SERVER_UNREACHABLE', message: expect.stringContaining('192.0.2.1') }),
      );
    expect(() => assertMcpReachable(near, 'scripted', 'require')).not.toThrow();
    expect(() => assertMcpReachable(far, 'live', 'require')).not.toThrow();
    expect(() => assertMcpReachable(far, 'scripted', 'off')).not.toThrow();
  });

  it('the provider takes isolation per query, validated', () => {
    expect(parseProviderConfig({ provider: 'codex', prompt: 'x', isolation: 'off' }).isolation).toBe('off');
    expect(parseProviderConfig({ provider: 'codex', prompt: 'x' }).isolation).toBeUndefined();
    expect(() => parseProviderConfig({ provider: 'codex', prompt: 'x', isolation: 'none' })).toThrow(
      expect.objectContaining({ code: 'CONFIG_INVALID', message: expect.stringContaining('isolation') }),
    );
  });
});

/** Every output of `parser` for `lines` (stream, text), then its end. */
function feed(parser: EngineParser, lines: Array<['stdout' | 'stderr', string]>): ParserOutput[] {
  return [...lines.flatMap(([stream, text]) => parser.line(stream, text)), ...parser.end()];
}

const notReady = (outputs: ParserOutput[]) =>
  outputs.filter((o) => o.type === 'diagnostic' && o.diagnostic.code === 'MCP_SERVER_NOT_READY');

describe('MCP readiness', () => {
  it('claude: a server its init lists as not connected is MCP_SERVER_NOT_READY; a connected one is not', () => {
    const init = (status: string) =>
      JSON.stringify({ type: 'system', subtype: 'init', session_id: 's1', mcp_servers: [{ name: 'slow', status }] });
    const failed = notReady(feed(withMcpReadiness(createClaudeParser()), [['stdout', init('failed')]]));
    expect(failed).toHaveLength(1);
    expect(JSON.stringify(failed[0])).toContain('"slow\\"');
    expect(notReady(feed(withMcpReadiness(createClaudeParser()), [['stdout', init('connected')]]))).toEqual([]);
  });

  it('codex: a required server that did not start in time (its stderr, said twice) is one MCP_SERVER_NOT_READY', () => {
    const line =
      'Error: thread/start: thread/start failed: error creating thread: Fatal error: Failed to initialize session: required MCP servers failed to initialize: slow: timed out handshaking with MCP server after 2s';
    const out = notReady(
      feed(withMcpReadiness(createCodexParser()), [
        ['stderr', line],
        ['stderr', line],
      ]),
    );
    expect(out).toHaveLength(1);
    expect(JSON.stringify(out[0])).toContain('timed out handshaking');
  });

  it("any engine: the scripted model's stand-in for a tool the engine did not offer is MCP_SERVER_NOT_READY, once", () => {
    const command = missingMcpToolCommand('slow', 'echo');
    const call = (id: string) =>
      JSON.stringify({ type: 'tool_use', tool_name: 'run_shell_command', tool_id: id, parameters: { command } });
    const out = feed(withMcpReadiness(createGeminiParser()), [
      ['stdout', JSON.stringify({ type: 'init', session_id: 's1' })],
      ['stdout', call('t1')],
      ['stdout', call('t2')],
    ]);
    expect(notReady(out)).toHaveLength(1);
    expect(JSON.stringify(notReady(out)[0])).toContain('its tool echo was not offered');
  });

  const event = (seq: number, data: RaspData): RaspEvent => ({
    protocol_version: RASP_VERSION,
    run_id: 'r',
    attempt: 1,
    seq,
    ts: new Date(0).toISOString(),
    engine: 'claude',
    data,
    raw_ref: null,
  });
  const events = [
    event(1, { type: 'engine.session', session_id: 's' }),
    event(2, { type: 'diagnostic', diagnostic: mcpNotReadyDiagnostic('slow', 'status failed') }),
    event(3, { type: 'engine.assistant.message', message_id: 'm', text: 'ok\n__SKILL_DONE__', final: true }),
    event(4, { type: 'engine.turn.end', status: 'completed' } as RaspData),
    event(5, { type: 'lifecycle.exited', exit_code: 0, signal: null, duration_ms: 1, timed_out: false } as RaspData),
  ];

  it('an attempt whose script calls a server reported not ready fails with MCP_SERVER_NOT_READY; one that does not call it completes', () => {
    expect(judgeCompletion(events, { errorPatterns: [], mcpServersUsed: ['slow'] })).toMatchObject({
      state: 'failed',
      failure: { code: 'MCP_SERVER_NOT_READY' },
      evidenceSeq: 2,
    });
    expect(judgeCompletion(events, { errorPatterns: [], mcpServersUsed: ['other'] }).state).toBe('completed');
    expect(judgeCompletion(events, { errorPatterns: [] }).state).toBe('completed');
  });

  it('an engine ended by the MCP startup watchdog fails with MCP_SERVER_STARTUP_STALLED, not as a cancel', () => {
    const stalled = [
      event(1, {
        type: 'diagnostic',
        diagnostic: { code: 'MCP_SERVER_STARTUP_STALLED', message: 'server "flood"', level: 'error' },
      } as RaspData),
      event(2, {
        type: 'lifecycle.exited',
        exit_code: null,
        signal: 'SIGTERM',
        duration_ms: 1,
        timed_out: false,
        canceled: true,
      } as RaspData),
    ];
    expect(judgeCompletion(stalled, { errorPatterns: [] })).toMatchObject({
      state: 'failed',
      reason: 'mcp_server_startup_stalled',
      failure: { code: 'MCP_SERVER_STARTUP_STALLED', category: 'timeout', message: 'server "flood"' },
      evidenceSeq: 1,
    });
  });

  it('the MCP startup watchdog: none without stdio servers; it fires naming them unless the turn began', async () => {
    expect(
      startMcpStartupWatchdog(
        [{ name: 'web', url: 'http://127.0.0.1:1/mcp' }],
        () => false,
        () => undefined,
      ),
    ).toBeNull();
    const stalls: string[] = [];
    const fired = startMcpStartupWatchdog(
      [{ name: 'flood', command: ['yes'], startupTimeoutMs: 1 }],
      () => false,
      (e) => stalls.push(e.code),
      5,
    )!;
    const quiet = startMcpStartupWatchdog(
      [{ name: 'ok', command: ['true'], startupTimeoutMs: 1 }],
      () => false,
      (e) => stalls.push(e.code),
      5,
    )!;
    quiet.output();
    await new Promise<void>((resolve) => fired.signal.addEventListener('abort', () => resolve(), { once: true }));
    expect(fired.error?.code).toBe('MCP_SERVER_STARTUP_STALLED');
    expect(fired.error?.message).toContain('"flood"');
    expect(stalls).toEqual(['MCP_SERVER_STARTUP_STALLED']);
    expect(quiet.signal.aborted).toBe(false);
    expect(quiet.error).toBeNull();
  });

  it('the watchdog grace: 30 s unless AGENT_HARNESS_MCP_TURN_GRACE_MS says otherwise; not a number is CONFIG_INVALID', () => {
    expect(mcpTurnStartGraceMs({})).toBe(30_000);
    expect(mcpTurnStartGraceMs({ AGENT_HARNESS_MCP_TURN_GRACE_MS: '8000' })).toBe(8000);
    expect(() => mcpTurnStartGraceMs({ AGENT_HARNESS_MCP_TURN_GRACE_MS: '8s' })).toThrow(
      expect.objectContaining({ code: 'CONFIG_INVALID' }),
    );
  });

  it("the servers a script calls: its mcp_tool turns'", () => {
    const script = parseModelScript({
      version: 1,
      turns: [
        { type: 'mcp_tool', server: 'one', tool: 'echo', arguments: {} },
        { type: 'shell', command: 'true' },
        { type: 'mcp_tool', server: 'two', tool: 'x' },
        { type: 'final', text: 'ok' },
      ],
    });
    expect(mcpServersCalled(script).sort()).toEqual(['one', 'two']);
    expect(mcpServersCalled(undefined)).toEqual([]);
  });
});

describe('run directory paths', () => {
  it("the scripted model reads the engine's working directory whole: spaces, quotes, non-ASCII letters", () => {
    const dir = `/tmp/ah q'd "x" ü/runs/r1`;
    expect(
      requestWorkingDirectory({ system: `env:\n - Primary working directory: ${dir}\n - Is a git repo: no` }),
    ).toBe(dir);
    expect(requestWorkingDirectory({ input: [{ text: `<env>\n  <cwd>${dir}</cwd>\n</env>` }] })).toBe(dir);
    // Qwen Code 0.24.4's system prompt.
    expect(
      requestWorkingDirectory({
        messages: [{ role: 'system', content: `I'm currently working in the directory: ${dir}\nHere is the folder` }],
      }),
    ).toBe(dir);
  });

  it("gemini's tools cannot work under a double quote, '...', a log-marker component or %XX; spaces, ' and ü are fine", () => {
    expect(geminiWorkspacePathProblem(`/tmp/ah q'd ü x/runs/r`)).toBeNull();
    expect(geminiWorkspacePathProblem('/tmp/ah 100% x/runs/r')).toBeNull();
    for (const dir of ['/tmp/a "b"/runs/r', '/tmp/a.../runs/r', '/tmp/FAIL x/runs/r', '/tmp/a%41b/runs/r'])
      expect(geminiWorkspacePathProblem(dir), dir).not.toBeNull();
  });

  it("gemini's refusal of a tool path for its shape is an ENGINE_WORKSPACE_PATH_REFUSED diagnostic", () => {
    const out = feed(createGeminiParser(), [
      ['stdout', JSON.stringify({ type: 'init', session_id: 's1' })],
      [
        'stdout',
        JSON.stringify({ type: 'tool_use', tool_name: 'write_file', tool_id: 't1', parameters: { file_path: 'a' } }),
      ],
      [
        'stdout',
        JSON.stringify({
          type: 'tool_result',
          tool_id: 't1',
          status: 'error',
          error: {
            type: 'invalid_tool_params',
            message:
              'Invalid path: Path contains suspicious characters (double quotes or ellipses) and is too long to be a simple filename.',
          },
        }),
      ],
    ]);
    expect(
      out.filter((o) => o.type === 'diagnostic' && o.diagnostic.code === 'ENGINE_WORKSPACE_PATH_REFUSED'),
    ).toHaveLength(1);
  });
});
