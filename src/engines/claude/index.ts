/**
 * The claude engine (`@anthropic-ai/claude-code`, pinned 2.1.197, a Bun-compiled native binary): data and
 * functions only; the runtime does the rest. It talks Anthropic Messages to `ANTHROPIC_BASE_URL`; env alone
 * points it at the scripted model and keeps it on loopback (shared/research/codex-claude.md §2, §5).
 */
import { applyClaudeAgentOptions } from './agent-options.js';
import path from 'node:path';
import { acp } from './acp.js';
import { claudeFacts } from './facts.js';
import type { EngineAdapter, EnginePrepareContext, PreparedEngine } from '../engine.js';
import { buildClaudeResumeArgs, buildClaudeStartArgs } from './command.js';
import {
  acceptClaudeOnboarding,
  CLAUDE_TRUST_KEY,
  claudeStatePath,
  ensureClaudeConfigDir,
  registerClaudeTrust,
  removeClaudeTrust,
} from './config.js';
import { leaseConfigEntry } from '../../runtime/lease.js';
import { recoverClaudeSession } from './session-store.js';

/**
 * The claude versions this adapter was checked against: its `stream-json` output and env switches were built on
 * 2.1.197 (the golden streams are its captures), and the whole engine project passed on 2.1.332 (the pin).
 */
export const CLAUDE_CHECKED_VERSIONS = '2.1.197 || 2.1.332';

/** The fake key sent to the scripted model (`x-api-key`). */
export const CLAUDE_SCRIPTED_KEY = 'sk-ant-agent-harness-scripted';

/**
 * Env claude reads that keeps it quiet: `CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC` alone removes every call to
 * api.anthropic.com and the session-title side request; the others are belt and braces. `IS_SANDBOX=1` lets
 * `--dangerously-skip-permissions` run as root.
 */
export const CLAUDE_QUIET_ENV: Readonly<Record<string, string>> = {
  CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
  DISABLE_AUTOUPDATER: '1',
  DISABLE_TELEMETRY: '1',
  DISABLE_ERROR_REPORTING: '1',
  IS_SANDBOX: '1',
};

/**
 * Scripted mode only: no request retries (claude 2.1.197 retries every failed call, 401 included, 10 times
 * with backoff ≈ 3 minutes; a scripted error turn is meant to fail the attempt at once, like codex's
 * `request_max_retries = 0`).
 */
export const CLAUDE_SCRIPTED_ENV: Readonly<Record<string, string>> = {
  CLAUDE_CODE_MAX_RETRIES: '0',
};

async function prepareClaude(ctx: EnginePrepareContext): Promise<PreparedEngine> {
  const configDir = path.join(ctx.agentHome, '.claude');
  await ensureClaudeConfigDir(configDir);
  const statePath = claudeStatePath(configDir);
  const releaseTrustLease = await leaseConfigEntry(ctx.agentHome, statePath, 'JSON', [
    'projects',
    ctx.runDir,
    CLAUDE_TRUST_KEY,
  ]);
  await registerClaudeTrust(statePath, ctx.runDir);
  const scripted = ctx.modelMode !== 'live' && ctx.modelBaseUrl !== null;
  // The TUI's first-run onboarding would check api.anthropic.com and exit offline: done once in the managed home.
  if (ctx.interactive) await acceptClaudeOnboarding(statePath, scripted ? CLAUDE_SCRIPTED_KEY : null);
  let cleaned = false;
  return {
    env: {
      ...CLAUDE_QUIET_ENV,
      CLAUDE_CONFIG_DIR: configDir,
      ...(scripted
        ? { ANTHROPIC_BASE_URL: ctx.modelBaseUrl!, ANTHROPIC_API_KEY: CLAUDE_SCRIPTED_KEY, ...CLAUDE_SCRIPTED_ENV }
        : {}),
    },
    configRoots: [configDir],
    leadingArgs: [],
    configInjection: { engine: 'claude', config_path: configDir, profile: null },
    trust: { path: ctx.runDir, config_path: statePath },
    async cleanup() {
      if (cleaned) return;
      cleaned = true;
      // The lease is dropped only once the entry is gone, so a failed removal is undone by a later command.
      await removeClaudeTrust(statePath, ctx.runDir)
        .then(releaseTrustLease)
        .catch(() => undefined);
    },
  };
}

/** The claude adapter. */
export const claudeEngine: EngineAdapter = {
  ...claudeFacts,
  checkedVersions: CLAUDE_CHECKED_VERSIONS,
  prepare: prepareClaude,
  applyAgentOptions: applyClaudeAgentOptions,
  buildStartArgs: buildClaudeStartArgs,
  buildResumeArgs: buildClaudeResumeArgs,
  acp,
  recoverSession: recoverClaudeSession,
};
