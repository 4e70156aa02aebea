/**
 * The GitHub Copilot CLI engine (`@github/copilot`, pinned 1.0.102, a Node SEA binary behind an npm launcher): data
 * and functions only; the runtime does the rest. In scripted mode it runs offline (`COPILOT_OFFLINE=true`) against
 * the scripted model server as a BYOK OpenAI Chat Completions provider, configured by environment alone (config.ts);
 * no GitHub sign-in is needed. Its shell tool is `bash`; it loads built-in skills of its own, kept out of the offered
 * skills (parse.ts).
 */
import fs from 'node:fs';
import type { EngineAdapter, EnginePrepareContext, PreparedEngine } from '../engine.js';
import { acp } from './acp.js';
import { applyCopilotAgentOptions } from './agent-options.js';
import { buildCopilotResumeArgs, buildCopilotStartArgs } from './command.js';
import { copilotHome, copilotProviderEnv, untrustCopilotFolder, writeCopilotSettings } from './config.js';
import { copilotFacts } from './facts.js';
import { resolveCopilotNativeLaunch } from './native-launch.js';
import { recoverCopilotSession, copilotSessionFromStore } from './session-store.js';

/**
 * The copilot versions this adapter was checked against: its `--output-format json` stream, flags, config and
 * offline BYOK env were measured on these (the pinned devDependency).
 */
export const COPILOT_CHECKED_VERSIONS = '1.0.102';

async function prepareCopilot(ctx: EnginePrepareContext): Promise<PreparedEngine> {
  const home = copilotHome(ctx.agentHome);
  fs.mkdirSync(home, { recursive: true });
  const settingsPath = await writeCopilotSettings(home, ctx.runDir);
  const scripted = ctx.modelMode !== 'live' && ctx.modelBaseUrl !== null;
  return {
    env: {
      COPILOT_HOME: home,
      COPILOT_AUTO_UPDATE: 'false',
      ...(scripted ? copilotProviderEnv(ctx.modelBaseUrl!) : {}),
    },
    configRoots: [home],
    leadingArgs: [],
    configInjection: { engine: 'copilot', config_path: settingsPath, profile: null },
    trust: { path: ctx.runDir, config_path: settingsPath },
    async cleanup() {
      await untrustCopilotFolder(settingsPath, ctx.runDir);
    },
  };
}

/** The copilot adapter. */
export const copilotEngine: EngineAdapter = {
  acp,
  ...copilotFacts,
  checkedVersions: COPILOT_CHECKED_VERSIONS,
  resolveNativeLaunch: resolveCopilotNativeLaunch,
  prepare: prepareCopilot,
  applyAgentOptions: applyCopilotAgentOptions,
  buildStartArgs: buildCopilotStartArgs,
  buildResumeArgs: buildCopilotResumeArgs,
  recoverSession: recoverCopilotSession,
  sessionFromStore: copilotSessionFromStore,
};
