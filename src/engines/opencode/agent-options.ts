/**
 * Agent options on opencode 1.18, as config of this attempt only (`OPENCODE_CONFIG_CONTENT`, merged over the
 * managed config): the permission mode as `permission.edit`/`permission.bash` (allow when bypassing, deny under
 * plan, ask under normal — a headless run rejects what would ask), allowed/disallowed tools as permissions too
 * (`"*": "deny"` then each allowed tool; each disallowed tool `deny`, which also hides it from the model), `mcp` servers (`local`/`remote`; a token as `{env:VAR}`), and the build
 * agent's `prompt` (system prompt) and `steps` (turn limit).
 */
import { MCP_STARTUP_TIMEOUT_MS } from '../../protocol/agent-option-defaults.js';
import type { AgentOptions, McpServerDef, PermissionMode } from '../../protocol/index.js';
import { mcpRecord, mcpTokenEnv, mcpTokenEnvs, type AppliedAgentOptions } from '../agent-options.js';

const PERMISSION: Record<PermissionMode, string> = { bypassPermissions: 'allow', plan: 'deny', normal: 'ask' };

/** A server's entry; `timeout` (ms, opencode 1.18's default 5000) bounds its requests, the first (connect) included. */
function mcpEntry(server: McpServerDef): Record<string, unknown> {
  const timeout = server.startupTimeoutMs ?? MCP_STARTUP_TIMEOUT_MS;
  if (server.url)
    return {
      type: 'remote',
      url: server.url,
      enabled: true,
      timeout,
      ...(server.bearerToken ? { headers: { Authorization: `Bearer {env:${mcpTokenEnv(server)}}` } } : {}),
    };
  return {
    type: 'local',
    command: [...server.command!],
    enabled: true,
    timeout,
    ...(server.env ? { environment: server.env } : {}),
  };
}

/** The config `options` add, as opencode reads it from OPENCODE_CONFIG_CONTENT. */
export function opencodeOptionsConfig(options: AgentOptions): Record<string, unknown> {
  const mode = PERMISSION[options.permissionMode];
  // Tool lists are permissions too: opencode 1.18 turns its `tools` map into permissions that the mode's own
  // permissions would override, and a denied tool is not offered to the model at all.
  const permission: Record<string, string> = options.allowedTools.length > 0 ? { '*': 'deny' } : {};
  Object.assign(permission, { edit: mode, bash: mode, webfetch: mode });
  if (options.allowedTools.length > 0) {
    for (const key of ['edit', 'bash', 'webfetch']) if (!options.allowedTools.includes(key)) permission[key] = 'deny';
    // An allowed tool runs freely, except that the mode still governs editing, the shell and the web.
    for (const tool of options.allowedTools)
      permission[tool] = ['edit', 'bash', 'webfetch'].includes(tool) ? mode : 'allow';
  }
  for (const tool of options.disallowedTools) permission[tool] = 'deny';
  const config: Record<string, unknown> = { permission };
  if (options.mcpServers.length > 0)
    config.mcp = Object.fromEntries(options.mcpServers.map((s) => [s.name, mcpEntry(s)]));
  const build: Record<string, unknown> = {};
  if (options.systemPrompt !== undefined) build.prompt = options.systemPrompt;
  if (options.maxTurns !== undefined) build.steps = options.maxTurns;
  if (Object.keys(build).length > 0) config.agent = { build };
  return config;
}

/** Maps `options` onto opencode's per-attempt config. */
export function applyOpencodeAgentOptions(options: AgentOptions): AppliedAgentOptions {
  const config = opencodeOptionsConfig(options);
  return {
    leadingArgs: [],
    args: [],
    files: [],
    settings: [],
    dropArgs: [],
    env: { OPENCODE_CONFIG_CONTENT: JSON.stringify(config), ...mcpTokenEnvs(options.mcpServers) },
    record: { ...config, ...(config.mcp ? { mcp: options.mcpServers.map(mcpRecord) } : {}) },
  };
}
