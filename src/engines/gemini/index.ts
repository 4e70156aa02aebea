/**
 * The gemini engine (`@google/gemini-cli`, pinned 0.61.0, a Node bundle): data and functions only; the runtime
 * does the rest. It talks the Gemini API (`/v1beta/models/{model}:streamGenerateContent`) to
 * `GOOGLE_GEMINI_BASE_URL` with gemini-api-key auth (plain http is accepted for 127.0.0.1).
 */
import { geminiWorkspacePathProblem } from './workspace-path.js';
import { applyGeminiAgentOptions } from './agent-options.js';
import path from 'node:path';
import { acp } from './acp.js';
import { geminiFacts } from './facts.js';
import type { EngineAdapter, EnginePrepareContext, PreparedEngine } from '../engine.js';
import { buildGeminiResumeArgs, buildGeminiStartArgs } from './command.js';
import {
  geminiConfigPaths,
  geminiSettingsPath,
  registerGeminiTrust,
  removeGeminiTrust,
  writeGeminiSettings,
} from './config.js';
import { leaseConfigEntry } from '../../runtime/lease.js';
import { recoverGeminiSession } from './session-store.js';
import { resolveGeminiNativeLaunch } from './native-launch.js';

/** Minimum gemini-cli version whose stream-json output and settings this adapter was built against. */
export const GEMINI_VERSION = '0.61.0';

/** The fake key sent to the scripted model (`x-goog-api-key`). */
export const GEMINI_SCRIPTED_KEY = 'agent-harness-scripted-gemini-key';

/** Env that keeps gemini quiet (telemetry off; the other switches live in settings.json). */
export const GEMINI_QUIET_ENV: Readonly<Record<string, string>> = {
  GEMINI_TELEMETRY_ENABLED: 'false',
};

/**
 * Scripted mode only: gemini 0.61.0 otherwise starts Node twice, a first process that only spawns the real one with a
 * larger heap (`--max-old-space-size` of half the machine's memory) and waits for it. A scripted session is short;
 * one process saves about 1.2 s of CPU per attempt (measured with `gemini --help`: 2.6 s user against 1.4 s).
 */
export const GEMINI_SCRIPTED_ENV: Readonly<Record<string, string>> = {
  GEMINI_CLI_NO_RELAUNCH: 'true',
};

async function prepareGemini(ctx: EnginePrepareContext): Promise<PreparedEngine> {
  const { geminiDir, trustPath } = geminiConfigPaths(ctx.agentHome);
  const settingsPath = geminiSettingsPath(ctx.runDir);
  const scripted = ctx.modelMode !== 'live' && ctx.modelBaseUrl !== null;
  await writeGeminiSettings(settingsPath, scripted ? ctx.modelMode : 'live');
  const releaseTrustLease = await leaseConfigEntry(ctx.agentHome, trustPath, 'JSON', [ctx.runDir]);
  await registerGeminiTrust(trustPath, ctx.runDir);
  let cleaned = false;
  return {
    env: {
      ...GEMINI_QUIET_ENV,
      GEMINI_CLI_TRUSTED_FOLDERS_PATH: trustPath,
      // Keeps the host's /etc/gemini-cli/settings.json and system-defaults.json out of the run.
      GEMINI_CLI_SYSTEM_SETTINGS_PATH: path.join(geminiDir, 'system', 'settings.json'),
      ...(scripted
        ? { ...GEMINI_SCRIPTED_ENV, GEMINI_API_KEY: GEMINI_SCRIPTED_KEY, GOOGLE_GEMINI_BASE_URL: ctx.modelBaseUrl! }
        : {}),
    },
    configRoots: [geminiDir],
    leadingArgs: [],
    configInjection: { engine: 'gemini', config_path: settingsPath, profile: null },
    trust: { path: ctx.runDir, config_path: trustPath },
    async cleanup() {
      if (cleaned) return;
      cleaned = true;
      // The lease is dropped only once the entry is gone, so a failed removal is undone by a later command.
      await removeGeminiTrust(trustPath, ctx.runDir)
        .then(releaseTrustLease)
        .catch(() => undefined);
    },
  };
}

/** The gemini adapter. */
export const geminiEngine: EngineAdapter = {
  ...geminiFacts,
  acp,
  checkedVersions: GEMINI_VERSION,
  prepare: prepareGemini,
  applyAgentOptions: applyGeminiAgentOptions,
  buildStartArgs: buildGeminiStartArgs,
  buildResumeArgs: buildGeminiResumeArgs,
  recoverSession: recoverGeminiSession,
  workspacePathProblem: geminiWorkspacePathProblem,
  resolveNativeLaunch: resolveGeminiNativeLaunch,
};
