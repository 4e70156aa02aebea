/**
 * The codex engine (`@openai/codex`, pinned 0.171.0): data and functions only; the runtime does the rest.
 */
import { applyCodexAgentOptions } from './agent-options.js';
import path from 'node:path';
import { acp } from './acp.js';
import { codexFacts } from './facts.js';
import type { EngineAdapter, EnginePrepareContext, PreparedEngine } from '../engine.js';
import { buildCodexResumeArgs, buildCodexStartArgs } from './command.js';
import {
  CODEX_PROVIDER_ID,
  CODEX_PROVIDER_KEY_ENV,
  codexConfigPath,
  codexTrustOverride,
  registerCodexTrust,
  removeCodexTrust,
  writeCodexConfig,
} from './config.js';
import { leaseConfigEntry } from '../../runtime/lease.js';
import { recoverCodexSession } from './session-store.js';
import { resolveCodexNativeLaunch } from './native-launch.js';

/** Minimum codex version whose `exec --json` stream and profile files this adapter was built against. */
export const CODEX_VERSION = '0.171.0';

async function prepareCodex(ctx: EnginePrepareContext): Promise<PreparedEngine> {
  return ctx.interactive ? prepareCodexWithTrustEntry(ctx) : prepareCodexWithTrustArg(ctx);
}

/** The arguments every codex attempt gets first: the harness profile and the scripted model's URL. */
function codexLeadingArgs(ctx: EnginePrepareContext): string[] {
  const leadingArgs = ['--profile', ctx.profile];
  if (ctx.modelBaseUrl && ctx.modelMode !== 'live') {
    leadingArgs.push('-c', `model_providers.${CODEX_PROVIDER_ID}.base_url=${JSON.stringify(`${ctx.modelBaseUrl}/v1`)}`);
  }
  return leadingArgs;
}

/** What every prepared codex attempt has, whatever way it was given trust. */
function preparedCodex(
  ctx: EnginePrepareContext,
  codexHome: string,
  profilePath: string,
  leadingArgs: string[],
  trust: PreparedEngine['trust'],
  cleanup: () => Promise<void>,
): PreparedEngine {
  return {
    env: {
      CODEX_HOME: codexHome,
      ...(ctx.modelMode === 'live' ? {} : { [CODEX_PROVIDER_KEY_ENV]: 'sk-agent-harness-scripted' }),
    },
    configRoots: [codexHome],
    leadingArgs,
    configInjection: { engine: 'codex', config_path: profilePath, profile: ctx.profile },
    trust,
    cleanup,
  };
}

/**
 * A non-interactive attempt (`codex exec`): the run dir is trusted on codex's command line (`-c projects=…`, which
 * codex 0.169 exec honours and never writes back), so nothing is added to the shared `config.toml` and nothing can be
 * left there by a harness that dies: no lease, no removal, no lock of the file per attempt.
 */
async function prepareCodexWithTrustArg(ctx: EnginePrepareContext): Promise<PreparedEngine> {
  const codexHome = path.join(ctx.agentHome, '.codex');
  const { configPath, profilePath } = await writeCodexConfig(codexHome, ctx.profile, ctx.modelMode);
  return preparedCodex(
    ctx,
    codexHome,
    profilePath,
    [...codexLeadingArgs(ctx), '-c', codexTrustOverride(ctx.runDir)],
    { path: ctx.runDir, config_path: configPath, via: 'argv' },
    async () => undefined,
  );
}

/**
 * An interactive attempt (PTY, live passthrough): the TUI reads and may write trust in `config.toml` itself, so the
 * entry is written there, leased first, and removed after the attempt.
 */
async function prepareCodexWithTrustEntry(ctx: EnginePrepareContext): Promise<PreparedEngine> {
  const codexHome = path.join(ctx.agentHome, '.codex');
  // The config files and the trust lease at once (each edit takes the file's own lock when it changes something);
  // the trust entry only once both stand, and a lease taken for a config that could not be written is dropped.
  const [written, leased] = await Promise.allSettled([
    writeCodexConfig(codexHome, ctx.profile, ctx.modelMode),
    leaseConfigEntry(ctx.agentHome, codexConfigPath(codexHome), 'TOML', ['projects', ctx.runDir]),
  ]);
  if (written.status === 'rejected') {
    if (leased.status === 'fulfilled') await leased.value().catch(() => undefined);
    throw written.reason;
  }
  if (leased.status === 'rejected') throw leased.reason;
  const { configPath, profilePath } = written.value;
  const releaseTrustLease = leased.value;
  await registerCodexTrust(configPath, ctx.runDir);
  let cleaned = false;
  return preparedCodex(
    ctx,
    codexHome,
    profilePath,
    codexLeadingArgs(ctx),
    { path: ctx.runDir, config_path: configPath, via: 'config' },
    async () => {
      if (cleaned) return;
      cleaned = true;
      await Promise.all([
        // The lease is dropped only once the entry is gone, so a failed removal is undone by a later command.
        removeCodexTrust(configPath, ctx.runDir)
          .then(releaseTrustLease)
          .catch(() => undefined),
        // Undo what an interactive attempt's TUI saved into the harness profile (the file is rewritten whole).
        writeCodexConfig(codexHome, ctx.profile, ctx.modelMode).catch(() => undefined),
      ]);
    },
  );
}

/** The codex adapter. */
export const codexEngine: EngineAdapter = {
  ...codexFacts,
  checkedVersions: CODEX_VERSION,
  resolveNativeLaunch: resolveCodexNativeLaunch,
  prepare: prepareCodex,
  applyAgentOptions: applyCodexAgentOptions,
  buildStartArgs: buildCodexStartArgs,
  buildResumeArgs: buildCodexResumeArgs,
  recoverSession: recoverCodexSession,
  acp,
};
