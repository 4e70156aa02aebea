/**
 * The engine side of {@link AgentOptions}: what an engine's mapping returns, and the helpers every mapping
 * shares (refusing a capability, the env variable that carries an MCP bearer token).
 */
import { AgentHarnessError } from '../errors/index.js';
import { DEFAULT_AGENT_OPTIONS } from '../protocol/agent-option-defaults.js';
import type { AgentOptions, McpServerDef } from '../protocol/agent-options.js';
import type { EngineId } from '../protocol/common.js';

/** What {@link applyAgentOptions} needs of an engine adapter. */
interface OptionsAdapter {
  id: EngineId;
  applyAgentOptions?: (options: AgentOptions, ctx: AgentOptionsContext) => AppliedAgentOptions;
}

/**
 * The options as `adapter` applies them; none given means the engine's headless defaults. An engine that maps no
 * options accepts only the defaults. Mapping is pure (it describes files and settings, writes nothing).
 */
export function applyAgentOptions(
  adapter: OptionsAdapter,
  options: AgentOptions | undefined,
  ctx: AgentOptionsContext,
): AppliedAgentOptions {
  if (!options) return noAgentOptions();
  if (adapter.applyAgentOptions) return adapter.applyAgentOptions(options, ctx);
  if (isDefaultAgentOptions(options)) return noAgentOptions();
  throw capabilityUnavailable(adapter.id, 'agentOptions', 'the engine maps no agent options');
}

/** Checks that `adapter` can apply `options`, before any run exists: ENGINE_CAPABILITY_UNAVAILABLE otherwise. */
export function checkAgentOptions(adapter: OptionsAdapter, options: AgentOptions): void {
  applyAgentOptions(adapter, options, { runDir: '/nonexistent', attemptTmp: '/nonexistent' });
}

/** What an engine needs to map options for one attempt. */
export interface AgentOptionsContext {
  /** The run directory (the agent's working directory). */
  runDir: string;
  /** The attempt's own temporary directory (removed after it): for files an option needs (a system prompt file). */
  attemptTmp: string;
  /**
   * `acp` when the engine runs over ACP and its `AcpSupport.mcpInAgentOptions` asks for the MCP servers too (they also
   * go to `session/new`); absent: the native transport.
   */
  transport?: 'native' | 'acp';
}

/** How an engine applies the options: arguments, environment, and which default arguments they replace. */
export interface AppliedAgentOptions {
  /** Arguments before every other (codex `-c key=value`). */
  leadingArgs: string[];
  /** Arguments after the engine's own. */
  args: string[];
  /** Default headless arguments these options replace (claude `--dangerously-skip-permissions` under `plan`). */
  dropArgs: string[];
  /** Environment for the engine (MCP bearer tokens go here, never into argv or config files). */
  env: Record<string, string>;
  /** Files to write before the engine starts (under the attempt's TMPDIR); mapping itself writes nothing. */
  files: Array<{ path: string; content: string }>;
  /**
   * Top-level keys to set in a JSON settings file for this attempt only: set before the engine starts, and put
   * back as they were (or removed) after it (gemini's workspace settings; mapping itself writes nothing).
   */
  settings: Array<{ file: string; keys: Record<string, unknown> }>;
  /** Config the options wrote, as recorded in `meta.N.json` `agent_options` (tokens never included). */
  record: Record<string, unknown>;
}

/** Nothing applied. */
export function noAgentOptions(): AppliedAgentOptions {
  return { leadingArgs: [], args: [], dropArgs: [], env: {}, files: [], settings: [], record: {} };
}

/** True when `options` ask for nothing beyond the defaults. */
export function isDefaultAgentOptions(options: AgentOptions): boolean {
  return (
    options.permissionMode === DEFAULT_AGENT_OPTIONS.permissionMode &&
    options.allowedTools.length === 0 &&
    options.disallowedTools.length === 0 &&
    options.systemPrompt === undefined &&
    options.maxTurns === undefined &&
    options.mcpServers.length === 0
  );
}

/** ENGINE_CAPABILITY_UNAVAILABLE for an option `engine` has no control for. */
export function capabilityUnavailable(engine: EngineId, capability: string, why: string): AgentHarnessError {
  return new AgentHarnessError('ENGINE_CAPABILITY_UNAVAILABLE', `${engine} cannot apply ${capability}: ${why}.`, {
    details: { engine, capability },
  });
}

/** Throws for the first of `checks` that is asked for: `[asked, capability, why]`. */
export function refuseUnavailable(engine: EngineId, checks: ReadonlyArray<readonly [boolean, string, string]>): void {
  const found = checks.find(([asked]) => asked);
  if (found) throw capabilityUnavailable(engine, found[1], found[2]);
}

/**
 * The environment variable that carries an HTTP MCP server's bearer token into the engine. Its name ends in
 * `_TOKEN`, so the audit's env redaction hides the value; the engine's config refers to it by name.
 */
export function mcpTokenEnv(server: McpServerDef): string {
  return `AGENT_HARNESS_MCP_${server.name.toUpperCase().replace(/-/g, '_')}_TOKEN`;
}

/** The env of every HTTP server's bearer token. */
export function mcpTokenEnvs(servers: readonly McpServerDef[]): Record<string, string> {
  return Object.fromEntries(servers.filter((s) => s.bearerToken).map((s) => [mcpTokenEnv(s), s.bearerToken!]));
}

/** A server definition for the audit: the token replaced by the name of its env variable. */
export function mcpRecord(server: McpServerDef): Record<string, unknown> {
  const { bearerToken, ...rest } = server;
  return bearerToken ? { ...rest, bearerToken: `[redacted: $${mcpTokenEnv(server)}]` } : rest;
}
