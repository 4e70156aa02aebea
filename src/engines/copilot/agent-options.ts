/**
 * Agent options on GitHub Copilot CLI 1.0.102, as `copilot --help`, `copilot help permissions` and probes of the
 * pinned CLI show them:
 *
 * - `permissionMode`: `bypassPermissions` keeps `--allow-all-tools`; `plan` adds `--plan` (plan mode blocks every
 *   write outside copilot's own session folder, shell redirections included, even with `--allow-all-tools`);
 *   `normal` drops `--allow-all-tools`, and prompt mode then denies every call that would ask ("Permission denied
 *   because no interactive user response was available"), as the other engines' headless `normal` does.
 * - `allowedTools` / `disallowedTools`: `--available-tools=a,b` ("only these tools will be available to the model")
 *   and `--excluded-tools=a,b` (one `=` token each: the flags take a list, and a separate value would swallow the
 *   arguments after it).
 * - `systemPrompt`: copilot has no flag for its system prompt; it is given as custom instructions, a
 *   `*.instructions.md` file in the attempt's own TMPDIR, named by `COPILOT_CUSTOM_INSTRUCTIONS_DIRS` (copilot adds
 *   it to its own system prompt, it does not replace it; nothing is written into the run directory).
 * - MCP servers as `--additional-mcp-config @<file>` (this attempt only, "augments config from
 *   ~/.copilot/mcp-config.json for this session"; `{mcpServers: {<name>: {type: "local", command, args, env, tools:
 *   ["*"]} | {type: "http", url, headers, tools: ["*"]}}}`, the shape `copilot mcp add` writes). The file is written
 *   into the attempt's own TMPDIR (removed after it), never the argv: an HTTP server's bearer token is in its
 *   `headers`, and copilot reads no header from the environment.
 *   Over ACP (`copilot --acp`, which takes only HTTP servers from `session/new`), the stdio servers come so too.
 * - `maxTurns` is refused: copilot counts no turns (`--max-ai-credits` caps credits, `--max-autopilot-continues`
 *   autopilot continuations).
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

/**
 * The system prompt's file in a `COPILOT_CUSTOM_INSTRUCTIONS_DIRS` directory: copilot 1.0.102 reads `*.instructions.md`
 * (and `.github/instructions/`) there, not `AGENTS.md` or `copilot-instructions.md` (probed: only these reached the
 * model request).
 */
const INSTRUCTIONS_FILE = 'agent-harness-system-prompt.instructions.md';

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
      options.maxTurns !== undefined,
      'maxTurns',
      'copilot 1.0.102 has no turn limit (--max-ai-credits caps credits, --max-autopilot-continues autopilot continuations)',
    ],
  ]);
  const applied = noAgentOptions();
  const args: string[] = [];
  const files: AppliedAgentOptions['files'] = [];
  const env: Record<string, string> = {};
  if (options.permissionMode === 'plan') args.push('--plan');
  if (options.allowedTools.length > 0) args.push(`--available-tools=${options.allowedTools.join(',')}`);
  if (options.disallowedTools.length > 0) args.push(`--excluded-tools=${options.disallowedTools.join(',')}`);
  if (options.systemPrompt !== undefined) {
    files.push({ path: path.join(ctx.attemptTmp, INSTRUCTIONS_FILE), content: `${options.systemPrompt}\n` });
    env.COPILOT_CUSTOM_INSTRUCTIONS_DIRS = ctx.attemptTmp;
  }
  // Over ACP copilot takes HTTP servers from session/new but rejects a stdio one ("Rejecting non-http/sse MCP server
  // from client", in its log): those come by the flag, as natively.
  const configured = ctx.transport === 'acp' ? options.mcpServers.filter((s) => !s.url) : options.mcpServers;
  if (configured.length > 0) {
    const config = { mcpServers: Object.fromEntries(configured.map((s) => [s.name, mcpEntry(s)])) };
    const file = path.join(ctx.attemptTmp, 'copilot-mcp-config.json');
    args.push('--additional-mcp-config', `@${file}`);
    files.push({ path: file, content: JSON.stringify(config) });
  }
  return {
    ...applied,
    args,
    files,
    env,
    dropArgs: options.permissionMode === 'normal' ? ['--allow-all-tools'] : [],
    record: {
      permission_mode: options.permissionMode,
      ...(options.allowedTools.length > 0 ? { available_tools: [...options.allowedTools] } : {}),
      ...(options.disallowedTools.length > 0 ? { excluded_tools: [...options.disallowedTools] } : {}),
      ...(options.systemPrompt !== undefined ? { custom_instructions: options.systemPrompt } : {}),
      ...(options.mcpServers.length > 0 ? { mcp: options.mcpServers.map(mcpRecord) } : {}),
    },
  };
}
