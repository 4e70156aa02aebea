/**
 * What a declared stdio MCP server needs of the host's files, under the host path rule (`host-path-rule.ts`): its
 * executable and the existing absolute paths on its command line, each bound read-only as narrowly as it runs — a
 * file, plus its package directory (so a script finds its `node_modules`); a directory, itself. Never a file's
 * parent just because it is the parent: `node <project>/mcp-server.js` beside the run root would show the agent
 * every run.
 */
import fs from 'node:fs';
import path from 'node:path';
import { AgentHarnessError } from '../../errors/index.js';
import type { McpServerDef } from '../../protocol/index.js';
import { describeHostPath, type HostPathRule, hostPathRefusal, judgeHostPath } from './host-path-rule.js';

/** The nearest directory holding `real` (a file's real path) that has a `package.json`, or null. */
function packageDirOf(real: string): string | null {
  for (let dir = path.dirname(real); ; dir = path.dirname(dir)) {
    if (fs.existsSync(path.join(dir, 'package.json'))) return dir;
    if (dir === '/') return null;
  }
}

/**
 * What to bind for an allowed path: a directory itself; a file itself and its package directory when the rule lets
 * that in, else the package's `node_modules` when it does (a script in the project, which holds the run root).
 */
function bindsOf(given: string, real: string, rule: HostPathRule): string[] {
  if (fs.statSync(real).isDirectory()) return [given];
  const binds = [given];
  const pkg = packageDirOf(real);
  if (pkg === null) return binds;
  if (hostPathRefusal(pkg, rule) === null) return [...binds, pkg];
  const modules = judgeHostPath(path.join(pkg, 'node_modules'), rule);
  if (modules && !modules.refused && fs.statSync(modules.real).isDirectory()) binds.push(modules.resolved);
  return binds;
}

/**
 * The host paths the stdio servers of `servers` are bound from (read-only). An argument the rule refuses (`/`, the
 * HOME) is passed to the server but not bound, so the server sees only what the agent sees; an executable the rule
 * refuses is CONFIG_INVALID naming the server, the path and why (thrown before anything starts when called from the
 * attempt's prepare step).
 */
export function planMcpBinds(servers: readonly McpServerDef[] | undefined, rule: HostPathRule): string[] {
  const binds: string[] = [];
  for (const server of servers ?? []) {
    const command = server.command ?? [];
    command.forEach((arg, index) => {
      if (!path.isAbsolute(arg)) return;
      const judged = judgeHostPath(arg, rule);
      if (judged === null) return; // not a path on this host
      if (judged.refused) {
        if (index > 0) return;
        throw new AgentHarnessError(
          'CONFIG_INVALID',
          `MCP server ${server.name}: its command ${describeHostPath(arg, judged)} cannot be bound into the agent's filesystem: ${judged.refused}. Run the server from an executable outside those places.`,
          { details: { server: server.name, value: arg, real: judged.real, reason: judged.refused } },
        );
      }
      binds.push(...bindsOf(arg, judged.real, rule));
    });
  }
  return binds;
}
