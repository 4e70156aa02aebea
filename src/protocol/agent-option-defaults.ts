/**
 * The agent options' default values as plain constants, without zod: an attempt and the engines' option mappers use
 * them on every start, which then loads no schema. `agent-options.ts` re-exports them, so `protocol/index.js` offers
 * them as before.
 */
import type { AgentOptions } from './agent-options.js';

/** How long an engine waits for a stdio MCP server to start, unless the server's definition says otherwise. */
export const MCP_STARTUP_TIMEOUT_MS = 30_000;

/** The options every engine runs with when none are given (the harness's headless defaults). */
export const DEFAULT_AGENT_OPTIONS: AgentOptions = {
  permissionMode: 'bypassPermissions',
  allowedTools: [],
  disallowedTools: [],
  mcpServers: [],
};
