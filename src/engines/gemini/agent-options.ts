/**
 * Agent options on gemini 0.61: the permission mode as `--approval-mode` (plan, default; `--yolo` kept only when
 * bypassing), and the rest in the run directory's workspace settings (`.gemini/settings.json`, where the harness
 * keeps gemini's enforced settings), set for this attempt and put back after it: `mcpServers`, `tools.core` (the
 * allowed built-in tools), `tools.exclude` (the disallowed ones), `model.maxSessionTurns`. Not a system settings
 * file: gemini skips one under a world-writable directory such as /tmp ("Parent directory '/tmp' is insecure").
 * The system prompt is a file named by `GEMINI_SYSTEM_MD` (it replaces gemini's own). An HTTP server's token is `$VAR` in the settings, expanded by
 * gemini from the environment.
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
 * A server's entry. `timeout` (ms) bounds gemini 0.61's connection to the server (and each request: its default is
 * 10 minutes for both).
 */
function mcpEntry(server: McpServerDef): Record<string, unknown> {
  const timeout = server.startupTimeoutMs ?? MCP_STARTUP_TIMEOUT_MS;
  if (server.url)
    return {
      httpUrl: server.url,
      timeout,
      ...(server.bearerToken ? { headers: { Authorization: `Bearer $${mcpTokenEnv(server)}` } } : {}),
    };
  const [command, ...args] = server.command!;
  return { command, args, timeout, ...(server.env ? { env: server.env } : {}) };
}

/** Maps `options` onto gemini's flags and a per-attempt system settings file. */
export function applyGeminiAgentOptions(options: AgentOptions, ctx: AgentOptionsContext): AppliedAgentOptions {
  const settings: Record<string, unknown> = {};
  if (options.mcpServers.length > 0)
    settings.mcpServers = Object.fromEntries(options.mcpServers.map((s) => [s.name, mcpEntry(s)]));
  const tools: Record<string, unknown> = {};
  if (options.allowedTools.length > 0) tools.core = [...options.allowedTools];
  if (options.disallowedTools.length > 0) tools.exclude = [...options.disallowedTools];
  if (Object.keys(tools).length > 0) settings.tools = tools;
  if (options.maxTurns !== undefined) settings.model = { maxSessionTurns: options.maxTurns };
  const env: Record<string, string> = { ...mcpTokenEnvs(options.mcpServers) };
  const files: AppliedAgentOptions['files'] = [];
  if (options.systemPrompt !== undefined) {
    const promptPath = path.join(ctx.attemptTmp, 'gemini-system.md');
    files.push({ path: promptPath, content: options.systemPrompt });
    env.GEMINI_SYSTEM_MD = promptPath;
  }
  const bypass = options.permissionMode === 'bypassPermissions';
  return {
    leadingArgs: [],
    args: bypass ? [] : ['--approval-mode', APPROVAL_MODE[options.permissionMode]],
    files,
    settings:
      Object.keys(settings).length > 0
        ? [{ file: path.join(ctx.runDir, '.gemini', 'settings.json'), keys: settings }]
        : [],
    dropArgs: bypass ? [] : ['--yolo'],
    env,
    record: {
      approval_mode: APPROVAL_MODE[options.permissionMode],
      workspace_settings: {
        ...settings,
        ...(settings.mcpServers ? { mcpServers: options.mcpServers.map(mcpRecord) } : {}),
      },
      system_prompt: options.systemPrompt ?? null,
    },
  };
}
