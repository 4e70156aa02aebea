/**
 * Agent options on codex 0.169, as `-c key=value` overrides of this attempt only (nothing written to the profile):
 * permission mode → `sandbox_mode` + `approval_policy` (seed 003's mapping, `on-request` for its `untrusted`), system prompt →
 * `developer_instructions`, MCP servers → `mcp_servers.<name>` tables (an HTTP server's token through
 * `bearer_token_env_var`). codex has no per-tool allow/deny list for its own tools and no turn limit.
 */
import { MCP_STARTUP_TIMEOUT_MS } from '../../protocol/agent-option-defaults.js';
import type { AgentOptions, McpServerDef, PermissionMode } from '../../protocol/index.js';
import { mcpRecord, mcpTokenEnv, mcpTokenEnvs, refuseUnavailable, type AppliedAgentOptions } from '../agent-options.js';

/** seed 003: bypass → danger-full-access, plan → read-only, normal → workspace-write. */
const SANDBOX: Record<PermissionMode, string> = {
  bypassPermissions: 'danger-full-access',
  plan: 'read-only',
  normal: 'workspace-write',
};
/**
 * seed 003: bypass → never (auto-approve), otherwise untrusted; codex 0.169 refuses `untrusted` ("no longer
 * supported") and offers only `on-request` and `never`, so `on-request` stands in for it.
 */
const APPROVAL: Record<PermissionMode, string> = {
  bypassPermissions: 'never',
  plan: 'on-request',
  normal: 'on-request',
};

/** A TOML value: strings and string arrays as JSON (valid TOML), a string map as an inline table. */
function toml(value: string | readonly string[] | Readonly<Record<string, string>>): string {
  if (typeof value === 'string' || Array.isArray(value)) return JSON.stringify(value);
  return `{ ${Object.entries(value)
    .map(([k, v]) => `${JSON.stringify(k)} = ${JSON.stringify(v)}`)
    .join(', ')} }`;
}

function mcpOverrides(server: McpServerDef): Array<[string, string]> {
  const key = `mcp_servers.${server.name}`;
  const startup: Array<[string, string]> = [
    [`${key}.startup_timeout_sec`, String((server.startupTimeoutMs ?? MCP_STARTUP_TIMEOUT_MS) / 1000)],
    [`${key}.required`, 'true'],
  ];
  if (server.url) {
    return [
      ...startup,
      [`${key}.url`, toml(server.url)],
      ...(server.bearerToken ? [[`${key}.bearer_token_env_var`, toml(mcpTokenEnv(server))] as [string, string]] : []),
    ];
  }
  const [command, ...args] = server.command!;
  return [
    ...startup,
    [`${key}.command`, toml(command!)],
    [`${key}.args`, toml(args)],
    ...(server.env ? [[`${key}.env`, toml(server.env)] as [string, string]] : []),
  ];
}

/** Maps `options` onto codex `-c` overrides; ENGINE_CAPABILITY_UNAVAILABLE for what codex cannot do. */
export function applyCodexAgentOptions(options: AgentOptions): AppliedAgentOptions {
  refuseUnavailable('codex', [
    [
      options.allowedTools.length > 0,
      'allowedTools',
      'codex 0.169 has no allow list for its own tools (only `enabled_tools` per MCP server)',
    ],
    [options.disallowedTools.length > 0, 'disallowedTools', 'codex 0.169 has no deny list for its own tools'],
    [options.maxTurns !== undefined, 'maxTurns', '`codex exec` has no turn limit'],
  ]);
  const overrides: Array<[string, string]> = [
    ['sandbox_mode', toml(SANDBOX[options.permissionMode])],
    ['approval_policy', toml(APPROVAL[options.permissionMode])],
    ...(options.systemPrompt !== undefined
      ? [['developer_instructions', toml(options.systemPrompt)] as [string, string]]
      : []),
    ...options.mcpServers.flatMap(mcpOverrides),
  ];
  return {
    leadingArgs: overrides.flatMap(([key, value]) => ['-c', `${key}=${value}`]),
    args: [],
    files: [],
    settings: [],
    dropArgs: [],
    env: mcpTokenEnvs(options.mcpServers),
    record: {
      sandbox_mode: SANDBOX[options.permissionMode],
      approval_policy: APPROVAL[options.permissionMode],
      developer_instructions: options.systemPrompt ?? null,
      mcp_servers: options.mcpServers.map(mcpRecord),
    },
  };
}
