/**
 * Agent options mapped onto each engine's own controls: the arguments, environment and files each mapping
 * produces (what the engine then reads), tokens kept out of argv, files and the audit record.
 */
import { describe, expect, it } from 'vitest';
import { applyClaudeAgentOptions } from '../../src/engines/claude/agent-options.js';
import { applyCodexAgentOptions } from '../../src/engines/codex/agent-options.js';
import { applyCopilotAgentOptions } from '../../src/engines/copilot/agent-options.js';
import { applyGeminiAgentOptions } from '../../src/engines/gemini/agent-options.js';
import { applyOpencodeAgentOptions } from '../../src/engines/opencode/agent-options.js';
import { applyQwenAgentOptions } from '../../src/engines/qwen/agent-options.js';
import { DEFAULT_AGENT_OPTIONS, type AgentOptions } from '../../src/protocol/index.js';
import { redactEnv } from '../../src/runtime/env.js';

const TOKEN = 'sekrit-bearer-123';
const MCP: AgentOptions['mcpServers'] = [
  { name: 'echo', command: ['node', '/srv/echo.mjs', '--flag'], env: { ECHO_MODE: 'loud' } },
  { name: 'remote-api', url: 'http://127.0.0.1:9/mcp', bearerToken: TOKEN, startupTimeoutMs: 2500 },
];
const ctx = { runDir: '/work/run', attemptTmp: '/tmp/attempt-1' };

function options(patch: Partial<AgentOptions>): AgentOptions {
  return { ...DEFAULT_AGENT_OPTIONS, ...patch };
}

/** The token appears nowhere but in the env variable that carries it (which the audit redacts). */
function expectTokenOnlyInEnv(applied: {
  leadingArgs: string[];
  args: string[];
  env: Record<string, string>;
  files: Array<{ content: string }>;
  settings: unknown[];
  record: unknown;
}): void {
  expect(
    JSON.stringify([applied.leadingArgs, applied.args, applied.files, applied.settings, applied.record]),
  ).not.toContain(TOKEN);
  expect(applied.env.AGENT_HARNESS_MCP_REMOTE_API_TOKEN).toBe(TOKEN);
  expect(redactEnv(applied.env).AGENT_HARNESS_MCP_REMOTE_API_TOKEN).toBe('[redacted]');
}

describe('codex', () => {
  it('maps permission modes as seed 003 does, the system prompt and MCP servers onto -c overrides', () => {
    const plan = applyCodexAgentOptions(
      options({ permissionMode: 'plan', systemPrompt: 'Be "brief".', mcpServers: MCP }),
    );
    expect(plan.leadingArgs).toEqual([
      '-c',
      'sandbox_mode="read-only"',
      '-c',
      'approval_policy="on-request"',
      '-c',
      'developer_instructions="Be \\"brief\\"."',
      '-c',
      'mcp_servers.echo.startup_timeout_sec=30',
      '-c',
      'mcp_servers.echo.required=true',
      '-c',
      'mcp_servers.echo.command="node"',
      '-c',
      'mcp_servers.echo.args=["/srv/echo.mjs","--flag"]',
      '-c',
      'mcp_servers.echo.env={ "ECHO_MODE" = "loud" }',
      '-c',
      'mcp_servers.remote-api.startup_timeout_sec=2.5',
      '-c',
      'mcp_servers.remote-api.required=true',
      '-c',
      'mcp_servers.remote-api.url="http://127.0.0.1:9/mcp"',
      '-c',
      'mcp_servers.remote-api.bearer_token_env_var="AGENT_HARNESS_MCP_REMOTE_API_TOKEN"',
    ]);
    expectTokenOnlyInEnv(plan);
    expect(applyCodexAgentOptions(options({})).leadingArgs).toEqual([
      '-c',
      'sandbox_mode="danger-full-access"',
      '-c',
      'approval_policy="never"',
    ]);
    expect(applyCodexAgentOptions(options({ permissionMode: 'normal' })).leadingArgs).toEqual([
      '-c',
      'sandbox_mode="workspace-write"',
      '-c',
      'approval_policy="on-request"',
    ]);
  });
});

describe('claude', () => {
  it('uses its own flags; plan and normal drop the bypass flag; every variadic flag is followed by a flag', () => {
    const applied = applyClaudeAgentOptions(
      options({
        permissionMode: 'plan',
        allowedTools: ['Read', 'Grep'],
        disallowedTools: ['Bash'],
        systemPrompt: 'You review.',
        maxTurns: 4,
        mcpServers: MCP,
      }),
    );
    expect(applied.dropArgs).toEqual(['--dangerously-skip-permissions']);
    const config = JSON.parse(applied.args[applied.args.indexOf('--mcp-config') + 1]!);
    expect(config).toEqual({
      mcpServers: {
        echo: { type: 'stdio', command: 'node', args: ['/srv/echo.mjs', '--flag'], env: { ECHO_MODE: 'loud' } },
        'remote-api': {
          type: 'http',
          url: 'http://127.0.0.1:9/mcp',
          headers: { Authorization: 'Bearer ${AGENT_HARNESS_MCP_REMOTE_API_TOKEN}' },
        },
      },
    });
    // claude waits for the servers before the first turn, as long as the longest asks.
    expect(applied.env).toMatchObject({
      MCP_CONNECTION_NONBLOCKING: '0',
      MCP_TIMEOUT: '30000',
      ENABLE_TOOL_SEARCH: 'false',
    });
    expect(applied.args.slice(2)).toEqual([
      '--strict-mcp-config',
      '--allowedTools',
      'Read,Grep',
      '--disallowedTools',
      'Bash',
      '--system-prompt',
      'You review.',
      '--max-turns',
      '4',
      '--permission-mode',
      'plan',
    ]);
    for (const variadic of ['--mcp-config', '--allowedTools', '--disallowedTools']) {
      expect(applied.args[applied.args.indexOf(variadic) + 2]).toMatch(/^--/);
    }
    expectTokenOnlyInEnv(applied);
    expect(applyClaudeAgentOptions(options({})).dropArgs).toEqual([]);
    expect(applyClaudeAgentOptions(options({ permissionMode: 'normal' })).args).toEqual([
      '--permission-mode',
      'default',
    ]);
  });
});

describe('gemini', () => {
  it('sets MCP, tools and turns in the run dir workspace settings for the attempt, writes a system prompt file; --approval-mode replaces --yolo', () => {
    const applied = applyGeminiAgentOptions(
      options({
        permissionMode: 'plan',
        allowedTools: ['read_file'],
        disallowedTools: ['run_shell_command'],
        systemPrompt: 'You review.',
        maxTurns: 4,
        mcpServers: MCP,
      }),
      ctx,
    );
    expect(applied.args).toEqual(['--approval-mode', 'plan']);
    expect(applied.dropArgs).toEqual(['--yolo']);
    expect(applied.env.GEMINI_CLI_SYSTEM_SETTINGS_PATH).toBeUndefined();
    expect(applied.env.GEMINI_SYSTEM_MD).toBe('/tmp/attempt-1/gemini-system.md');
    expect(applied.settings).toHaveLength(1);
    expect(applied.settings[0]!.file).toBe('/work/run/.gemini/settings.json');
    const settings = applied.settings[0]!.keys;
    expect(settings).toEqual({
      mcpServers: {
        echo: { command: 'node', args: ['/srv/echo.mjs', '--flag'], timeout: 30_000, env: { ECHO_MODE: 'loud' } },
        'remote-api': {
          httpUrl: 'http://127.0.0.1:9/mcp',
          timeout: 2500,
          headers: { Authorization: 'Bearer $AGENT_HARNESS_MCP_REMOTE_API_TOKEN' },
        },
      },
      tools: { core: ['read_file'], exclude: ['run_shell_command'] },
      model: { maxSessionTurns: 4 },
    });
    expect(applied.files.find((f) => f.path === applied.env.GEMINI_SYSTEM_MD)?.content).toBe('You review.');
    expectTokenOnlyInEnv(applied);
    expect(applyGeminiAgentOptions(options({}), ctx)).toMatchObject({ args: [], dropArgs: [], settings: [] });
  });
});

describe('qwen', () => {
  it('declares MCP tools in the model request (no tool_search deferral) and waits startupTimeoutMs for their listing', () => {
    const applied = applyQwenAgentOptions(options({ mcpServers: MCP }), ctx);
    expect(applied.settings).toHaveLength(1);
    expect(applied.settings[0]!.file).toBe('/work/run/.qwen/settings.json');
    expect(applied.settings[0]!.keys.mcpServers).toEqual({
      echo: {
        command: 'node',
        args: ['/srv/echo.mjs', '--flag'],
        timeout: 30_000,
        discoveryTimeoutMs: 30_000,
        alwaysLoadTools: true,
        env: { ECHO_MODE: 'loud' },
      },
      'remote-api': {
        httpUrl: 'http://127.0.0.1:9/mcp',
        timeout: 2500,
        discoveryTimeoutMs: 2500,
        alwaysLoadTools: true,
        headers: { Authorization: 'Bearer $AGENT_HARNESS_MCP_REMOTE_API_TOKEN' },
      },
    });
    expectTokenOnlyInEnv(applied);
  });

  it('over ACP the servers are left to session/new: the tool search is off and discovery blocks the session', () => {
    const applied = applyQwenAgentOptions(options({ mcpServers: MCP }), { ...ctx, transport: 'acp' });
    expect(applied.settings).toEqual([
      { file: '/work/run/.qwen/settings.json', keys: { tools: { toolSearch: { enabled: false } } } },
    ]);
    expect(applied.env.QWEN_CODE_LEGACY_MCP_BLOCKING).toBe('1');
    expect(applyQwenAgentOptions(options({ mcpServers: MCP }), ctx).env.QWEN_CODE_LEGACY_MCP_BLOCKING).toBeUndefined();
    expect(applyQwenAgentOptions(options({}), { ...ctx, transport: 'acp' }).settings).toEqual([]);
  });
});

describe('copilot', () => {
  it('plan adds --plan, normal drops --allow-all-tools; tool lists are one token each; the system prompt is custom instructions in the attempt TMPDIR', () => {
    const applied = applyCopilotAgentOptions(
      options({
        permissionMode: 'plan',
        allowedTools: ['view', 'bash'],
        disallowedTools: ['create'],
        systemPrompt: 'You review.',
      }),
      ctx,
    );
    expect(applied.args).toEqual(['--plan', '--available-tools=view,bash', '--excluded-tools=create']);
    expect(applied.dropArgs).toEqual([]);
    expect(applied.env.COPILOT_CUSTOM_INSTRUCTIONS_DIRS).toBe('/tmp/attempt-1');
    expect(applied.files).toEqual([
      { path: '/tmp/attempt-1/agent-harness-system-prompt.instructions.md', content: 'You review.\n' },
    ]);
    expect(applyCopilotAgentOptions(options({ permissionMode: 'normal' }), ctx)).toMatchObject({
      args: [],
      dropArgs: ['--allow-all-tools'],
    });
    expect(applyCopilotAgentOptions(options({}), ctx)).toMatchObject({ args: [], dropArgs: [], env: {}, files: [] });
  });

  it('keeps the MCP bearer token in its config file in the attempt TMPDIR, never argv; refuses maxTurns', () => {
    const applied = applyCopilotAgentOptions(options({ mcpServers: MCP }), ctx);
    expect(applied.args).toEqual(['--additional-mcp-config', '@/tmp/attempt-1/copilot-mcp-config.json']);
    expect(JSON.stringify([applied.args, applied.record, applied.env])).not.toContain(TOKEN);
    // Over ACP copilot takes the HTTP server from session/new; the stdio one comes by the flag.
    const overAcp = applyCopilotAgentOptions(options({ mcpServers: MCP }), { ...ctx, transport: 'acp' });
    expect(overAcp.args).toEqual(['--additional-mcp-config', '@/tmp/attempt-1/copilot-mcp-config.json']);
    expect(Object.keys(JSON.parse(overAcp.files[0]!.content).mcpServers)).toEqual(['echo']);
    const httpOnly = applyCopilotAgentOptions(options({ mcpServers: MCP.slice(1) }), { ...ctx, transport: 'acp' });
    expect(httpOnly.args).toEqual([]);
    expect(() => applyCopilotAgentOptions(options({ maxTurns: 3 }), ctx)).toThrow(
      expect.objectContaining({
        code: 'ENGINE_CAPABILITY_UNAVAILABLE',
        details: { engine: 'copilot', capability: 'maxTurns' },
      }),
    );
  });
});

describe('opencode', () => {
  it('bypass with tool lists: the allowed tools allowed, the rest and the disallowed denied', () => {
    const applied = applyOpencodeAgentOptions(
      options({ allowedTools: ['read', 'bash'], disallowedTools: ['webfetch'] }),
    );
    expect(JSON.parse(applied.env.OPENCODE_CONFIG_CONTENT!).permission).toEqual({
      '*': 'deny',
      edit: 'deny',
      bash: 'allow',
      webfetch: 'deny',
      read: 'allow',
    });
  });

  it('puts permissions, tools, MCP and the build agent in OPENCODE_CONFIG_CONTENT', () => {
    const applied = applyOpencodeAgentOptions(
      options({
        permissionMode: 'plan',
        allowedTools: ['read', 'grep'],
        disallowedTools: ['bash'],
        systemPrompt: 'You review.',
        maxTurns: 4,
        mcpServers: MCP,
      }),
    );
    expect(JSON.parse(applied.env.OPENCODE_CONFIG_CONTENT!)).toEqual({
      permission: { '*': 'deny', edit: 'deny', bash: 'deny', webfetch: 'deny', read: 'allow', grep: 'allow' },
      mcp: {
        echo: {
          type: 'local',
          command: ['node', '/srv/echo.mjs', '--flag'],
          enabled: true,
          timeout: 30_000,
          environment: { ECHO_MODE: 'loud' },
        },
        'remote-api': {
          type: 'remote',
          url: 'http://127.0.0.1:9/mcp',
          enabled: true,
          timeout: 2500,
          headers: { Authorization: 'Bearer {env:AGENT_HARNESS_MCP_REMOTE_API_TOKEN}' },
        },
      },
      agent: { build: { prompt: 'You review.', steps: 4 } },
    });
    expect(applied.env.OPENCODE_CONFIG_CONTENT).not.toContain(TOKEN);
    expectTokenOnlyInEnv(applied);
  });
});

describe('settings set for one attempt', () => {
  it('sets top-level keys and puts them back as they were (or removes them)', async () => {
    const { setSettingsKeys } = await import('../../src/runtime/config-file.js');
    const fs = await import('node:fs');
    const os = await import('node:os');
    const path = await import('node:path');
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ah-settings-'));
    const file = path.join(dir, 'settings.json');
    fs.writeFileSync(file, JSON.stringify({ general: { a: 1 }, tools: { core: ['x'] } }));
    const restore = await setSettingsKeys(file, {
      tools: { exclude: ['y'] },
      mcpServers: { echo: { command: 'node' } },
    });
    expect(JSON.parse(fs.readFileSync(file, 'utf8'))).toEqual({
      general: { a: 1 },
      tools: { exclude: ['y'] },
      mcpServers: { echo: { command: 'node' } },
    });
    await restore();
    expect(JSON.parse(fs.readFileSync(file, 'utf8'))).toEqual({ general: { a: 1 }, tools: { core: ['x'] } });
    fs.rmSync(dir, { recursive: true, force: true });
  });
});
