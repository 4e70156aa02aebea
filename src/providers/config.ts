/**
 * AgentProviderConfig (seed 003, names kept), validated with zod: a bad config is CONFIG_INVALID naming the field.
 * `extra` carries the harness's own choices: `script` (the scripted model's script), `model` (`scripted`, the
 * default, `live`, or a cassette mode `record`, `replay`, `auto` with `cassette`, `upstream`, `strict`, `pace`, `forkAt`,
 * `forkTo`, `forkCassette`: see docs/cassettes.md), `timeoutMs`, `runRoot`.
 */
import * as z from 'zod';
import { parseConfig } from '../errors/index.js';
import { isEngineId, unknownEngineMessage } from '../engines/registry.js';
import { IsolationModeSchema, McpServerDefSchema, PermissionModeSchema } from '../protocol/index.js';

export { McpServerDefSchema, type McpServerDef } from '../protocol/index.js';

/** The configuration of one query. */
export const AgentProviderConfigSchema = z.object({
  provider: z.string().refine(isEngineId, { error: (issue) => unknownEngineMessage(issue.input) }),
  prompt: z.string().min(1),
  cwd: z.string().min(1).optional(),
  model: z.string().min(1).optional(),
  maxTurns: z.number().int().positive().optional(),
  resumeSessionId: z.string().min(1).optional(),
  signal: z.custom<AbortSignal>((value) => value instanceof AbortSignal, 'expected an AbortSignal').optional(),
  systemPrompt: z.string().optional(),
  mcpServers: z.array(McpServerDefSchema).default([]),
  permissionMode: PermissionModeSchema.default('bypassPermissions'),
  allowedTools: z.array(z.string()).default([]),
  disallowedTools: z.array(z.string()).default([]),
  apiKey: z.string().optional(),
  /**
   * The attempt's isolation (docs/isolation.md): `auto` (namespaces, else the loud fallback), `require` (namespaces
   * or ISOLATION_UNAVAILABLE), `off` (the host network and processes). Unset: AGENT_HARNESS_ISOLATION, else `auto`.
   */
  isolation: IsolationModeSchema.optional(),
  extra: z.record(z.string(), z.unknown()).optional(),
  /**
   * Host paths the agent sees beyond its workspace inside its mount namespace: `PATH` (read-write), `PATH:ro`, or
   * `{ path, readOnly }`; relative paths against the project root. Each must exist (CONFIG_INVALID).
   */
  expose: z
    .array(
      z.union([z.string().min(1), z.object({ path: z.string().min(1), readOnly: z.boolean().optional() }).strict()]),
    )
    .optional(),
});
/** The configuration of one query, as given. */
export type AgentProviderConfig = z.input<typeof AgentProviderConfigSchema>;
/** The configuration of one query, validated with defaults applied. */
export type ResolvedAgentProviderConfig = z.output<typeof AgentProviderConfigSchema>;

/** Validates a config; CONFIG_INVALID names the first bad field. */
export function parseProviderConfig(value: unknown): ResolvedAgentProviderConfig {
  return parseConfig(AgentProviderConfigSchema, value, 'AgentProviderConfig');
}
