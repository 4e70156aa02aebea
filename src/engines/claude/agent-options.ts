/**
 * Agent options on claude 2.1.332, all as its own flags of this attempt: `--permission-mode` (plan, default or
 * bypassPermissions; the headless `--dangerously-skip-permissions` is dropped unless bypassing),
 * `--allowedTools` / `--disallowedTools`, `--system-prompt`, `--max-turns`, and `--mcp-config <json>` with
 * `--strict-mcp-config` (only these servers). An HTTP server's token is `${VAR}` in the config, expanded by claude
 * from the environment, so it never appears in argv or the audit.
 */
import { MCP_STARTUP_TIMEOUT_MS } from '../../protocol/agent-option-defaults.js';
import type { AgentOptions, McpServerDef, PermissionMode } from '../../protocol/index.js';
import { mcpRecord, mcpTokenEnv, mcpTokenEnvs, type AppliedAgentOptions } from '../agent-options.js';

const PERMISSION_MODE: Record<PermissionMode, string> = {
  bypassPermissions: 'bypassPermissions',
  plan: 'plan',
  normal: 'default',
};

function mcpEntry(server: McpServerDef): Record<string, unknown> {
  if (server.url) {
    return {
      type: 'http',
      url: server.url,
      ...(server.bearerToken ? { headers: { Authorization: `Bearer \${${mcpTokenEnv(server)}}` } } : {}),
    };
  }
  const [command, ...args] = server.command!;
  return { type: 'stdio', command, args, ...(server.env ? { env: server.env } : {}) };
}

/**
 * claude connects its MCP servers in the background in `-p` mode (its init event lists them `pending`);
 * `MCP_CONNECTION_NONBLOCKING=0` makes it wait for them before the first turn, each bounded by `MCP_TIMEOUT` (ms,
 * one for all servers: the longest asked for). `ENABLE_TOOL_SEARCH=false` declares the servers' tools in the model
 * request: claude 2.1.332 otherwise defers every MCP tool behind its `ToolSearch` tool, so the model never sees
 * `mcp__<server>__<tool>` among its tools (the same choice as qwen's `alwaysLoadTools`).
 */
function mcpStartupEnv(servers: readonly McpServerDef[]): Record<string, string> {
  if (servers.length === 0) return {};
  const timeout = Math.max(...servers.map((s) => s.startupTimeoutMs ?? MCP_STARTUP_TIMEOUT_MS));
  return { MCP_CONNECTION_NONBLOCKING: '0', MCP_TIMEOUT: String(timeout), ENABLE_TOOL_SEARCH: 'false' };
}

/** Maps `options` onto claude's flags. Variadic flags are each followed by another flag, never by a positional. */
export function applyClaudeAgentOptions(options: AgentOptions): AppliedAgentOptions {
  const mcpConfig =
    options.mcpServers.length > 0
      ? { mcpServers: Object.fromEntries(options.mcpServers.map((s) => [s.name, mcpEntry(s)])) }
      : null;
  const args = [
    ...(mcpConfig ? ['--mcp-config', JSON.stringify(mcpConfig), '--strict-mcp-config'] : []),
    ...(options.allowedTools.length > 0 ? ['--allowedTools', options.allowedTools.join(',')] : []),
    ...(options.disallowedTools.length > 0 ? ['--disallowedTools', options.disallowedTools.join(',')] : []),
    ...(options.systemPrompt !== undefined ? ['--system-prompt', options.systemPrompt] : []),
    ...(options.maxTurns !== undefined ? ['--max-turns', String(options.maxTurns)] : []),
    '--permission-mode',
    PERMISSION_MODE[options.permissionMode],
  ];
  return {
    leadingArgs: [],
    args,
    files: [],
    settings: [],
    dropArgs: options.permissionMode === 'bypassPermissions' ? [] : ['--dangerously-skip-permissions'],
    env: { ...mcpTokenEnvs(options.mcpServers), ...mcpStartupEnv(options.mcpServers) },
    record: {
      permission_mode: PERMISSION_MODE[options.permissionMode],
      allowed_tools: options.allowedTools,
      disallowed_tools: options.disallowedTools,
      system_prompt: options.systemPrompt ?? null,
      max_turns: options.maxTurns ?? null,
      mcp_servers: options.mcpServers.map(mcpRecord),
    },
  };
}
