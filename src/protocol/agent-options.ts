/**
 * What a caller may ask of an engine beyond a prompt (seed 003's AgentProviderConfig fields): permissions, tool
 * allow/deny lists, a system prompt, a turn limit and MCP servers. Each engine maps them onto its own controls
 * (`src/engines/<id>/agent-options.ts`) or refuses a capability it does not have.
 */
import * as z from 'zod';

/** A name usable as a key in every engine's config (TOML, JSON) and in an environment variable name. */
const MCP_NAME = /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/;

/** An MCP server definition: stdio (`command` = [executable, ...args], `env`) or HTTP (`url`, `bearerToken`). */
export const McpServerDefSchema = z
  .object({
    name: z.string().regex(MCP_NAME, 'a plain name: letters, digits, "_" and "-", starting with a letter or digit'),
    command: z.array(z.string().min(1)).min(1).optional(),
    env: z.record(z.string(), z.string()).optional(),
    url: z.string().url().optional(),
    bearerToken: z.string().min(1).optional(),
    /**
     * How long the engine waits for a stdio server to start before the first turn (ms; default
     * {@link MCP_STARTUP_TIMEOUT_MS}), where the engine has a setting for it (docs/providers.md).
     */
    startupTimeoutMs: z.number().int().positive().max(3_600_000).optional(),
  })
  .refine((def) => Boolean(def.command) !== Boolean(def.url), {
    message: 'an MCP server has either `command` (stdio) or `url` (HTTP)',
  })
  .refine((def) => !def.bearerToken || Boolean(def.url), { message: '`bearerToken` is for an HTTP server (`url`)' });
export { DEFAULT_AGENT_OPTIONS, MCP_STARTUP_TIMEOUT_MS } from './agent-option-defaults.js';

/** An MCP server definition. */
export type McpServerDef = z.infer<typeof McpServerDefSchema>;

/** `bypassPermissions`: the agent acts without asking; `plan`: read-only; `normal`: the engine's asking mode. */
export const PermissionModeSchema = z.enum(['bypassPermissions', 'plan', 'normal']);
/** A permission mode. */
export type PermissionMode = z.infer<typeof PermissionModeSchema>;

/** The options of one attempt that engines map onto their own controls. */
export interface AgentOptions {
  permissionMode: PermissionMode;
  allowedTools: readonly string[];
  disallowedTools: readonly string[];
  systemPrompt?: string | undefined;
  maxTurns?: number | undefined;
  mcpServers: readonly McpServerDef[];
}
