/**
 * Agent options on GitHub Copilot CLI 1.0.102: MCP servers as `--additional-mcp-config @<file>` (this attempt only,
 * "augments config from ~/.copilot/mcp-config.json for this session"; `{mcpServers: {<name>: {type: "local", command,
 * args, env, tools: ["*"]} | {type: "http", url, headers, tools: ["*"]}}}`, the shape `copilot mcp add` writes). The
 * file is written into the attempt's own TMPDIR (removed after it), never the argv: an HTTP server's bearer token is in
 * its `headers`, and copilot reads no header from the environment. The other options are refused until measured:
 * prompt mode requires `--allow-all-tools`, so only `bypassPermissions`.
 */
import path from 'node:path';
import type { AgentOptions, McpServerDef } from '../../protocol/index.js';
import {
  type AgentOptionsContext,
  isDefaultAgentOptions,
  mcpRecord,
  noAgentOptions,
  refuseUnavailable,
  type AppliedAgentOptions,
} from '../agent-options.js';

const UNMAPPED = 'not mapped onto copilot 1.0.102 yet (its flags for it were not measured here)';

/** A server's entry of `--additional-mcp-config`. */
function mcpEntry(server: McpServerDef): Record<string, unknown> {
  if (server.url)
    return {
      type: 'http',
      url: server.url,
      tools: ['*'],
      ...(server.bearerToken ? { headers: { Authorization: `Bearer ${server.bearerToken}` } } : {}),
    };
  const [command, ...args] = server.command!;
  return { type: 'local', command, args, tools: ['*'], ...(server.env ? { env: server.env } : {}) };
}

/** Maps `options` onto copilot's flags for one attempt; ENGINE_CAPABILITY_UNAVAILABLE for what it cannot do. */
export function applyCopilotAgentOptions(options: AgentOptions, ctx: AgentOptionsContext): AppliedAgentOptions {
  if (isDefaultAgentOptions(options)) return noAgentOptions();
  refuseUnavailable('copilot', [
    [
      options.permissionMode !== 'bypassPermissions',
      `permissionMode:${options.permissionMode}`,
      'prompt mode runs only with --allow-all-tools',
    ],
    [options.allowedTools.length > 0, 'allowedTools', UNMAPPED],
    [options.disallowedTools.length > 0, 'disallowedTools', UNMAPPED],
    [options.systemPrompt !== undefined, 'systemPrompt', UNMAPPED],
    [options.maxTurns !== undefined, 'maxTurns', UNMAPPED],
  ]);
  const applied = noAgentOptions();
  if (options.mcpServers.length === 0) return applied;
  const config = { mcpServers: Object.fromEntries(options.mcpServers.map((s) => [s.name, mcpEntry(s)])) };
  const file = path.join(ctx.attemptTmp, 'copilot-mcp-config.json');
  return {
    ...applied,
    args: ['--additional-mcp-config', `@${file}`],
    files: [{ path: file, content: JSON.stringify(config) }],
    record: { mcp: options.mcpServers.map(mcpRecord) },
  };
}
