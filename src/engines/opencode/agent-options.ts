/**
 * Agent options on opencode 1.18, as config of this attempt only (`OPENCODE_CONFIG_CONTENT`, merged over the
 * managed config): the permission mode as `permission.edit`/`permission.bash` (allow when bypassing, deny under
 * plan, ask under normal — a headless run rejects what would ask), allowed/disallowed tools as `tools`
 * (`"*": false` then each allowed tool), `mcp` servers (`local`/`remote`; a token as `{env:VAR}`), and the build
 * agent's `prompt` (system prompt) and `steps` (turn limit).
 */
import type { AgentOptions, McpServerDef, PermissionMode } from '../../protocol/index.js';
import { mcpRecord, mcpTokenEnv, mcpTokenEnvs, type AppliedAgentOptions } from '../agent-options.js';

const PERMISSION: Record<PermissionMode, string> = { bypassPermissions: 'allow', plan: 'deny', normal: 'ask' };

function mcpEntry(server: McpServerDef): Record<string, unknown> {
  if (server.url) return { type: 'remote', url: server.url, enabled: true, ...(server.bearerToken ? { headers: { Authorization: `Bearer {env:${mcpTokenEnv(server)}}` } } : {}) };
  return { type: 'local', command: [...server.command!], enabled: true, ...(server.env ? { environment: server.env } : {}) };
}

/** The config `options` add, as opencode reads it from OPENCODE_CONFIG_CONTENT. */
export function opencodeOptionsConfig(options: AgentOptions): Record<string, unknown> {
  const config: Record<string, unknown> = {
    permission: { edit: PERMISSION[options.permissionMode], bash: PERMISSION[options.permissionMode], webfetch: PERMISSION[options.permissionMode] },
  };
  const tools: Record<string, boolean> = {};
  if (options.allowedTools.length > 0) {
    tools['*'] = false;
    for (const tool of options.allowedTools) tools[tool] = true;
  }
  for (const tool of options.disallowedTools) tools[tool] = false;
  if (Object.keys(tools).length > 0) config.tools = tools;
  if (options.mcpServers.length > 0) config.mcp = Object.fromEntries(options.mcpServers.map((s) => [s.name, mcpEntry(s)]));
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
    dropArgs: [],
    env: { OPENCODE_CONFIG_CONTENT: JSON.stringify(config), ...mcpTokenEnvs(options.mcpServers) },
    record: { ...config, ...(config.mcp ? { mcp: options.mcpServers.map(mcpRecord) } : {}) },
  };
}
