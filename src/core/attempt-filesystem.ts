/**
 * What the agent of one attempt sees of the host's files (issue 30): its workspace and managed directories
 * read-write, `.audit/` read-only, the engine's installation, Node and the system read-only, the declared stdio MCP
 * servers' directories read-only, and what the caller exposed. The plan is handed to the attempt's isolation, whose
 * init builds it inside the mount namespace (`runtime/isolation/mount-plan.ts`).
 */
import fs from 'node:fs';
import path from 'node:path';
import type { AgentOptions } from '../protocol/index.js';
import {
  buildMountPlan,
  installationRoot,
  type ExposeRequest,
  type MountPlan,
} from '../runtime/isolation/mount-plan.js';
import type { HarnessPaths, RunHome } from '../runtime/paths.js';

/** What {@link attemptMountPlan} needs. */
export interface AttemptFilesystemInput {
  paths: HarnessPaths;
  runDir: string;
  /** The attempt's own TMPDIR (made by the caller). */
  attemptTmp: string;
  /** The run's own HOME, with its npm prefix and uv directories inside (made by the caller). */
  home: RunHome;
  /** The engine executable as found, and the native binary started in its place (codex), if any. */
  executables: readonly string[];
  agentOptions: AgentOptions | undefined;
  expose: readonly ExposeRequest[];
}

/** The files a declared stdio MCP server runs: the absolute paths on its command line that exist, as directories. */
function mcpPaths(options: AgentOptions | undefined): string[] {
  const found: string[] = [];
  for (const server of options?.mcpServers ?? []) {
    for (const arg of server.command ?? []) {
      if (!path.isAbsolute(arg)) continue;
      try {
        found.push(fs.statSync(arg).isDirectory() ? arg : path.dirname(arg));
      } catch {
        // not a path
      }
    }
  }
  return found;
}

/**
 * The mount plan of one attempt (its root is chosen by the isolation). Read-write: the workspace, the run's own
 * HOME (its npm prefix and uv directories inside) and the attempt's TMPDIR. The shared managed npm prefix, where
 * engines may be installed and which is searched first for them, is read-only: nothing an agent writes there could
 * run on the host (`doctor`) or in a later attempt as its engine.
 */
export function attemptMountPlan(input: AttemptFilesystemInput): MountPlan {
  const { paths } = input;
  const node = [process.execPath, path.dirname(process.execPath)];
  return buildMountPlan({
    workspace: input.runDir,
    readOnlyInWorkspace: [path.join(input.runDir, '.audit')],
    writable: [input.home.home, input.attemptTmp],
    readOnly: [...input.executables, ...input.executables.map(installationRoot), ...node, paths.npmPrefix],
    mcp: mcpPaths(input.agentOptions),
    expose: input.expose,
  });
}
