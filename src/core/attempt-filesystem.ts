/**
 * What the agent of one attempt sees of the host's files (issue 30): its workspace and managed directories
 * read-write, `.audit/` read-only, the engine's installation, Node and the system read-only, the declared stdio MCP
 * servers' files read-only, and what the caller exposed. The plan is handed to the attempt's isolation, whose
 * init builds it inside the mount namespace (`runtime/isolation/mount-plan.ts`).
 */
import path from 'node:path';
import type { AgentOptions } from '../protocol/index.js';
import {
  buildMountPlan,
  installationRoot,
  type ExposeRequest,
  type MountPlan,
} from '../runtime/isolation/mount-plan.js';
import { type HostPathRule, hostPathRule } from '../runtime/isolation/host-path-rule.js';
import { planMcpBinds } from '../runtime/isolation/mcp-binds.js';
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
  /** The host path rule every engine, MCP and exposed path passes (default: the run root's, with this HOME). */
  rule?: HostPathRule;
}

/**
 * The files the declared stdio MCP servers run, as the host path rule lets them in (`runtime/isolation/mcp-binds.ts`:
 * a script file and its package directory, not the directory it sits in).
 */
function mcpPaths(options: AgentOptions | undefined, rule: HostPathRule): string[] {
  return planMcpBinds(options?.mcpServers, rule);
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
  const rule = input.rule ?? hostPathRule({ runRoot: paths.runRoot });
  return buildMountPlan({
    workspace: input.runDir,
    readOnlyInWorkspace: [path.join(input.runDir, '.audit')],
    writable: [input.home.home, input.attemptTmp],
    readOnly: [...input.executables, ...input.executables.map(installationRoot), ...node, paths.npmPrefix],
    mcp: mcpPaths(input.agentOptions, rule),
    expose: input.expose,
    rule,
  });
}
