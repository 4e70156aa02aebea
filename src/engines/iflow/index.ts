/**
 * The iFlow engine. No iFlow CLI package is served by the registry reachable here (`@iflow-ai/iflow-cli`), so
 * nothing is pinned: the executable is found on the managed prefix or PATH when present, and a missing one is
 * ENGINE_EXECUTABLE_MISSING. It talks OpenAI Chat Completions to its backend.
 */
import { applyIflowAgentOptions } from './agent-options.js';
import path from 'node:path';
import { iflowFacts } from './facts.js';
import type { EngineAdapter, EnginePrepareContext, PreparedEngine } from '../engine.js';
import { buildIflowResumeArgs, buildIflowStartArgs } from './command.js';
import { registerIflowTrust, removeIflowTrust, writeIflowSettings } from './config.js';

async function prepareIflow(ctx: EnginePrepareContext): Promise<PreparedEngine> {
  const iflowHome = path.join(ctx.agentHome, '.iflow');
  const settings = await writeIflowSettings(path.join(ctx.runDir, '.iflow'), ctx.modelMode, ctx.modelBaseUrl);
  const trustFile = await registerIflowTrust(iflowHome, ctx.runDir);
  let cleaned = false;
  return {
    env: { IFLOW_DISABLE_TELEMETRY: '1' },
    configRoots: [iflowHome],
    leadingArgs: [],
    configInjection: { engine: 'iflow', config_path: settings, profile: null },
    trust: { path: ctx.runDir, config_path: trustFile },
    async cleanup() {
      if (cleaned) return;
      cleaned = true;
      await removeIflowTrust(trustFile, ctx.runDir).catch(() => undefined);
    },
  };
}

/** The iFlow adapter. */
export const iflowEngine: EngineAdapter = {
  ...iflowFacts,
  prepare: prepareIflow,
  applyAgentOptions: applyIflowAgentOptions,
  buildStartArgs: buildIflowStartArgs,
  buildResumeArgs: buildIflowResumeArgs,
};
