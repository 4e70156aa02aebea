/**
 * Agent options on Qwen Code 0.24.4: the permission mode as `--approval-mode` (plan, default; `--yolo` kept only
 * when bypassing), the system prompt as `--system-prompt`, the turn limit as `--max-session-turns`, and the rest in
 * the run directory's workspace settings (`.qwen/settings.json`, where the harness keeps qwen's enforced settings),
 * set for this attempt and put back after it: `mcpServers`, `tools.core` (the allowed built-in tools),
 * `tools.exclude` (the disallowed ones). An HTTP server's token is `$VAR` in the settings, expanded by qwen from the
 * environment (the Gemini CLI's settings loader).
 */
import path from 'node:path';
import { MCP_STARTUP_TIMEOUT_MS } from '../../protocol/agent-option-defaults.js';
import type { AgentOptions, McpServerDef, PermissionMode } from '../../protocol/index.js';
import {
  mcpRecord,
  mcpTokenEnv,
  mcpTokenEnvs,
  type AgentOptionsContext,
  type AppliedAgentOptions,
} from '../agent-options.js';

const APPROVAL_MODE: Record<PermissionMode, string> = { bypassPermissions: 'yolo', plan: 'plan', normal: 'default' };

/**
 * A server's entry. `timeout` (ms) bounds each request; `discoveryTimeoutMs` bounds the startup handshake and tool
 * listing, which qwen otherwise caps at 5 s for HTTP and 30 s for stdio whatever `startupTimeoutMs` says.
 * `alwaysLoadTools: true` declares the server's tools in the model request: qwen 0.24.4 otherwise defers every MCP
 * tool behind its `tool_search` / `tool_call` bridge, so the model never sees `mcp__<server>__<tool>` among its tools.
 */
function mcpEntry(server: McpServerDef): Record<string, unknown> {
  const timeout = server.startupTimeoutMs ?? MCP_STARTUP_TIMEOUT_MS;
  const common = { timeout, discoveryTimeoutMs: timeout, alwaysLoadTools: true };
  if (server.url)
    return {
      httpUrl: server.url,
      ...common,
      ...(server.bearerToken ? { headers: { Authorization: `Bearer $${mcpTokenEnv(server)}` } } : {}),
    };
  const [command, ...args] = server.command!;
  return { command, args, ...common, ...(server.env ? { env: server.env } : {}) };
}

/** Maps `options` onto qwen's flags and the run's workspace settings. */
export function applyQwenAgentOptions(options: AgentOptions, ctx: AgentOptionsContext): AppliedAgentOptions {
  const settings: Record<string, unknown> = {};
  if (options.mcpServers.length > 0)
    settings.mcpServers = Object.fromEntries(options.mcpServers.map((s) => [s.name, mcpEntry(s)]));
  const tools: Record<string, unknown> = {};
  if (options.allowedTools.length > 0) tools.core = [...options.allowedTools];
  if (options.disallowedTools.length > 0) tools.exclude = [...options.disallowedTools];
  if (Object.keys(tools).length > 0) settings.tools = tools;
  const bypass = options.permissionMode === 'bypassPermissions';
  const args = bypass ? [] : ['--approval-mode', APPROVAL_MODE[options.permissionMode]];
  if (options.systemPrompt !== undefined) args.push('--system-prompt', options.systemPrompt);
  if (options.maxTurns !== undefined) args.push('--max-session-turns', String(options.maxTurns));
  return {
    leadingArgs: [],
    args,
    files: [],
    settings:
      Object.keys(settings).length > 0
        ? [{ file: path.join(ctx.runDir, '.qwen', 'settings.json'), keys: settings }]
        : [],
    dropArgs: bypass ? [] : ['--yolo'],
    env: { ...mcpTokenEnvs(options.mcpServers) },
    record: {
      approval_mode: APPROVAL_MODE[options.permissionMode],
      workspace_settings: {
        ...settings,
        ...(settings.mcpServers ? { mcpServers: options.mcpServers.map(mcpRecord) } : {}),
      },
      system_prompt: options.systemPrompt ?? null,
      max_session_turns: options.maxTurns ?? null,
    },
  };
}
