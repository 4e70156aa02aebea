/**
 * The qwen engine (`@qwen-code/qwen-code`, pinned 0.24.4, a Node bundle; a Gemini CLI fork): data and functions
 * only; the runtime does the rest. It talks OpenAI Chat Completions to `OPENAI_BASE_URL` with `OPENAI_API_KEY` and
 * `OPENAI_MODEL` (plain http is accepted for 127.0.0.1) and prints claude-like stream-json.
 */
import path from 'node:path';
import type { EngineAdapter, EnginePrepareContext, PreparedEngine } from '../engine.js';
import { leaseConfigEntry } from '../../runtime/lease.js';
import { acp } from './acp.js';
import { applyQwenAgentOptions } from './agent-options.js';
import { buildQwenResumeArgs, buildQwenStartArgs } from './command.js';
import { qwenConfigPaths, qwenSettingsPath, registerQwenTrust, removeQwenTrust, writeQwenSettings } from './config.js';
import { qwenFacts } from './facts.js';
import { recoverQwenSession } from './session-store.js';
import { resolveQwenNativeLaunch } from './native-launch.js';

/** Minimum Qwen Code version whose stream-json output and settings this adapter was built against. */
export const QWEN_VERSION = '0.24.4';

/** The fake key sent to the scripted model (`Authorization: Bearer`). */
export const QWEN_SCRIPTED_KEY = 'sk-agent-harness-scripted-qwen';

/** The model name sent to the scripted model (any name is served). */
export const QWEN_SCRIPTED_MODEL = 'agent-harness-scripted';

/**
 * Env that keeps qwen quiet: the notice that `--yolo` runs without qwen's own sandbox (the harness isolates the
 * attempt itself), and no relaunch of the CLI in a child process with a bigger heap (one process to contain).
 */
export const QWEN_QUIET_ENV: Readonly<Record<string, string>> = {
  QWEN_CODE_SUPPRESS_YOLO_WARNING: '1',
  QWEN_CODE_NO_RELAUNCH: 'true',
};

async function prepareQwen(ctx: EnginePrepareContext): Promise<PreparedEngine> {
  const { qwenDir, trustPath } = qwenConfigPaths(ctx.agentHome);
  const settingsPath = qwenSettingsPath(ctx.runDir);
  const scripted = ctx.modelMode !== 'live' && ctx.modelBaseUrl !== null;
  await writeQwenSettings(settingsPath, scripted ? ctx.modelMode : 'live');
  const releaseTrustLease = await leaseConfigEntry(ctx.agentHome, trustPath, 'JSON', [ctx.runDir]);
  await registerQwenTrust(trustPath, ctx.runDir);
  let cleaned = false;
  return {
    env: {
      ...QWEN_QUIET_ENV,
      QWEN_CODE_TRUSTED_FOLDERS_PATH: trustPath,
      // Keeps the host's /etc/qwen-code/settings.json and system-defaults.json out of the run.
      QWEN_CODE_SYSTEM_SETTINGS_PATH: path.join(qwenDir, 'system', 'settings.json'),
      QWEN_CODE_SYSTEM_DEFAULTS_PATH: path.join(qwenDir, 'system', 'system-defaults.json'),
      ...(scripted
        ? {
            OPENAI_BASE_URL: `${ctx.modelBaseUrl!}/v1`,
            OPENAI_API_KEY: QWEN_SCRIPTED_KEY,
            OPENAI_MODEL: QWEN_SCRIPTED_MODEL,
          }
        : {}),
    },
    configRoots: [qwenDir],
    leadingArgs: [],
    configInjection: { engine: 'qwen', config_path: settingsPath, profile: null },
    trust: { path: ctx.runDir, config_path: trustPath },
    async cleanup() {
      if (cleaned) return;
      cleaned = true;
      // The lease is dropped only once the entry is gone, so a failed removal is undone by a later command.
      await removeQwenTrust(trustPath, ctx.runDir)
        .then(releaseTrustLease)
        .catch(() => undefined);
    },
  };
}

/** The qwen adapter. */
export const qwenEngine: EngineAdapter = {
  acp,
  ...qwenFacts,
  checkedVersions: QWEN_VERSION,
  prepare: prepareQwen,
  applyAgentOptions: applyQwenAgentOptions,
  buildStartArgs: buildQwenStartArgs,
  buildResumeArgs: buildQwenResumeArgs,
  recoverSession: recoverQwenSession,
  resolveNativeLaunch: resolveQwenNativeLaunch,
};
