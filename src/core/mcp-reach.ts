/**
 * Which declared HTTP MCP servers an attempt's agent can reach. In scripted mode under namespaces, the agent's
 * network namespace holds only loopback: a server on the host's loopback is forwarded into it (like the model
 * server), and any other URL is refused before the run (MCP_SERVER_UNREACHABLE) instead of failing unseen inside.
 * In live mode, or with isolation off, the agent keeps the host network and every URL is its own to reach.
 */
import { AgentHarnessError } from '../errors/index.js';
import type { ModelScript } from '../model/index.js';
import type { IsolationMode, McpServerDef, ModelMode } from '../protocol/index.js';
import { loopbackTarget } from '../runtime/isolation/attempt-isolation.js';

/** The URLs of the declared HTTP MCP servers, to forward into the namespace (those on loopback are). */
export function mcpForwardUrls(servers: readonly McpServerDef[] | undefined): string[] {
  return (servers ?? []).flatMap((server) => (server.url ? [server.url] : []));
}

/**
 * Throws MCP_SERVER_UNREACHABLE for the first HTTP server not on the host's loopback, when the attempt gets a network
 * namespace of its own (scripted mode, isolation not `off`). Nothing is connected to.
 */
export function assertMcpReachable(
  servers: readonly McpServerDef[] | undefined,
  modelMode: ModelMode,
  isolation: IsolationMode | null,
): void {
  if (modelMode === 'live' || isolation === 'off') return;
  const unreachable = (servers ?? []).find((server) => server.url && !loopbackTarget(server.url));
  if (!unreachable) return;
  throw new AgentHarnessError(
    'MCP_SERVER_UNREACHABLE',
    `MCP server "${unreachable.name}" is at ${unreachable.url}, which is not on the host's loopback: in scripted mode the agent's network namespace reaches only 127.0.0.1 (forwarded), so the engine could never connect to it. Serve it on 127.0.0.1, or run with isolation off.`,
    { details: { server: unreachable.name, url: unreachable.url } },
  );
}

/** The MCP servers whose tools `script` calls (its `mcp_tool` turns, wherever they are: turns, routes). */
export function mcpServersCalled(script: ModelScript | undefined): string[] {
  const servers = new Set<string>();
  const visit = (value: unknown): void => {
    if (Array.isArray(value)) for (const item of value) visit(item);
    else if (value !== null && typeof value === 'object') {
      const record = value as Record<string, unknown>;
      if (record.kind === 'mcp_tool' && typeof record.server === 'string') servers.add(record.server);
      for (const child of Object.values(record)) visit(child);
    }
  };
  visit(script);
  return [...servers];
}
