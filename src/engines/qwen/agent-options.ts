/**
 * Agent options on Qwen Code 0.24.4: the permission mode as `--approval-mode` (plan, default; `--yolo` kept only
 * when bypassing), the system prompt as `--system-prompt`, the turn limit as `--max-session-turns`, and the rest in
 * the run directory's workspace settings (`.qwen/settings.json`, where the harness keeps qwen's enforced settings),
 * set for this attempt and put back after it: `mcpServers`, `tools.core` (the allowed built-in tools),
 * `tools.exclude` (the disallowed ones). An HTTP server's token is `$VAR` in the settings, expanded by qwen from the
 * environment (the Gemini CLI's settings loader).
 *
 * Over ACP (`qwen --acp`) the MCP servers go to `session/new`, where 0.24.4 builds them without `alwaysLoadTools`
 * (`newSessionConfigInRuntimeContext`) and lets them replace a settings server of the same name; the workspace
 * settings then turn qwen's tool search off (`tools.toolSearch.enabled: false`), so that qwen declares every deferred
 * tool, the servers' among them, in the model request; and `QWEN_CODE_LEGACY_MCP_BLOCKING=1` has qwen discover the
 * servers before the session opens (over ACP it would do so in the background, after its first model request).
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
  const acp = ctx.transport === 'acp';
  // Over ACP the servers come from session/new, which replaces a settings server of the same name.
  if (options.mcpServers.length > 0 && !acp)
    settings.mcpServers = Object.fromEntries(options.mcpServers.map((s) => [s.name, mcpEntry(s)]));
  const tools: Record<string, unknown> = {};
  if (options.allowedTools.length > 0) tools.core = [...options.allowedTools];
  if (options.disallowedTools.length > 0) tools.exclude = [...options.disallowedTools];
  // qwen's session/new builds its servers without `alwaysLoadTools`: with the tool search off, qwen declares its
  // deferred tools (the servers' among them) in the model request instead.
  if (options.mcpServers.length > 0 && acp) tools.toolSearch = { enabled: false };
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
    // Over ACP qwen discovers MCP servers in the background and may send its first request before their tools are
    // listed; QWEN_CODE_LEGACY_MCP_BLOCKING=1 makes it discover them before the session opens.
    env: {
      ...mcpTokenEnvs(options.mcpServers),
      ...(options.mcpServers.length > 0 && acp ? { QWEN_CODE_LEGACY_MCP_BLOCKING: '1' } : {}),
    },
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
