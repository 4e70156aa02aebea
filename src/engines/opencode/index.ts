/**
 * The opencode engine (`opencode-ai`, pinned 1.18.33, a Bun-compiled native binary): data and functions only;
 * the runtime does the rest. It talks OpenAI Chat Completions to a custom `@ai-sdk/openai-compatible`
 * provider. Quiet flags keep it on loopback: no models.dev fetch, no autoupdate, no LSP downloads, no default
 * plugins, no share, no Claude Code prompt/skills import; the plugin-dependency install is stubbed in config.ts.
 */
import { percentEncodedPathProblem } from '../workspace-path.js';
import { applyOpencodeAgentOptions } from './agent-options.js';
import fs from 'node:fs';
import path from 'node:path';
import { assertAgentPathSafe } from '../../runtime/agent-writable.js';
import { writeFileAtomic } from '../../runtime/atomic-write.js';
import { holdFileLock } from '../../runtime/file-lock.js';
import { acp } from './acp.js';
import { opencodeFacts } from './facts.js';
import type { EngineAdapter, EnginePrepareContext, PreparedEngine } from '../engine.js';
import { buildOpencodeResumeArgs, buildOpencodeStartArgs } from './command.js';
import {
  OPENCODE_BASE_URL_ENV,
  OPENCODE_PROVIDER_KEY_ENV,
  stubOpencodeDependencies,
  writeOpencodeConfig,
} from './config.js';
import { recoverOpencodeSession } from './session-store.js';

/** Minimum opencode version whose `run --format json` stream and config this adapter was built against. */
export const OPENCODE_VERSION = '1.18.33';

/** Env flags opencode reads (all seen in the binary) that switch off startup traffic and host imports. */
export const OPENCODE_QUIET_ENV: Readonly<Record<string, string>> = {
  OPENCODE_DISABLE_MODELS_FETCH: '1',
  OPENCODE_DISABLE_AUTOUPDATE: '1',
  OPENCODE_DISABLE_LSP_DOWNLOAD: '1',
  OPENCODE_DISABLE_DEFAULT_PLUGINS: '1',
  OPENCODE_DISABLE_SHARE: '1',
  OPENCODE_DISABLE_CLAUDE_CODE: '1',
  OPENCODE_DISABLE_EXTERNAL_SKILLS: '1',
};

/**
 * Scripted mode only: the model catalog opencode reads (`OPENCODE_MODELS_PATH`) is this empty one. Without it,
 * with no models.dev cache in the run's new home and the fetch off, opencode 1.18.33 builds its built-in models.dev
 * snapshot (a 4.4 MB object literal of every provider and model) on every start: about 1.9 s of the 6.1 s of CPU
 * a scripted `run` took (median of 8 paired runs, 4.2 s with it).
 * The scripted provider is defined whole in the config (`provider.agent-harness`) and is not in that catalog; live,
 * the catalog is how opencode knows the real providers, so it is kept.
 */
export const OPENCODE_SCRIPTED_MODELS = '{}\n';

/**
 * Scripted mode only: the JavaScriptCore tiers opencode's Bun runtime uses stop at the baseline JIT
 * (`BUN_JSC_useDFGJIT=0`, which also turns off FTL). A scripted attempt lives a few seconds, too short for the
 * optimizing compilers' background work to pay off: a scripted `run` took 3.5 s of CPU (user+sys) with them, 3.15 s
 * without (medians of 14 interleaved runs each; 4.5 s against 3.9 s on a busier machine). The JavaScript it runs, and
 * so every tool call and turn, is the same; only how fast hot code gets is not. Live sessions keep every tier.
 */
export const OPENCODE_SCRIPTED_RUNTIME_ENV: Readonly<Record<string, string>> = { BUN_JSC_useDFGJIT: '0' };

/** Where the scripted catalog is written: the run's own opencode cache directory (`$XDG_CACHE_HOME/opencode`). */
export function opencodeScriptedModelsPath(agentHome: string): string {
  return path.join(agentHome, '.cache', 'opencode', 'agent-harness-models.json');
}

/**
 * Writes the scripted catalog into the run's home and returns its path. The home is the agent's: never through a link
 * it may have planted there (agent-writable.ts), and written by rename, which replaces a link rather than following it.
 */
async function writeScriptedModels(agentHome: string): Promise<string> {
  const file = opencodeScriptedModelsPath(agentHome);
  assertAgentPathSafe(file);
  await fs.promises.mkdir(path.dirname(file), { recursive: true });
  await writeFileAtomic(file, OPENCODE_SCRIPTED_MODELS, { durable: false });
  return file;
}

/**
 * opencode creates its database (`$XDG_DATA_HOME/opencode/opencode.db`) and migrates it on its first start: two
 * first starts at once on one managed home race (one fails "Failed query: CREATE TABLE …", its turn never ends). So
 * an attempt that finds no database holds a lock of the managed home until it ends, and every opencode attempt
 * passes that lock first: the first start runs alone, the following ones find the database made.
 */
async function firstStartLock(agentHome: string): Promise<(() => void) | null> {
  const release = await holdFileLock(path.join(agentHome, '.local', 'share', 'opencode', '.agent-harness-first-start'));
  if (!fs.existsSync(path.join(agentHome, '.local', 'share', 'opencode', 'opencode.db'))) return release;
  release();
  return null;
}

async function prepareOpencode(ctx: EnginePrepareContext): Promise<PreparedEngine> {
  const firstStart = await firstStartLock(ctx.agentHome);
  try {
    return await preparedOpencode(ctx, firstStart);
  } catch (error) {
    firstStart?.();
    throw error;
  }
}

async function preparedOpencode(ctx: EnginePrepareContext, firstStart: (() => void) | null): Promise<PreparedEngine> {
  const configDir = path.join(ctx.agentHome, '.config', 'opencode');
  const configPath = await writeOpencodeConfig(configDir, ctx.modelMode);
  await stubOpencodeDependencies(configDir);
  const projectConfigDir = path.join(ctx.runDir, '.opencode');
  if (fs.existsSync(projectConfigDir)) await stubOpencodeDependencies(projectConfigDir);
  const scripted = ctx.modelMode !== 'live' && ctx.modelBaseUrl !== null;
  return {
    env: {
      ...OPENCODE_QUIET_ENV,
      ...(scripted
        ? {
            [OPENCODE_BASE_URL_ENV]: `${ctx.modelBaseUrl}/v1`,
            [OPENCODE_PROVIDER_KEY_ENV]: 'sk-agent-harness-scripted',
            OPENCODE_MODELS_PATH: await writeScriptedModels(ctx.agentHome),
            ...OPENCODE_SCRIPTED_RUNTIME_ENV,
          }
        : {}),
    },
    configRoots: [configDir],
    leadingArgs: [],
    configInjection: { engine: 'opencode', config_path: configPath, profile: null },
    trust: null,
    async cleanup() {
      // opencode has no trust registry; a first start lets the next attempts start.
      firstStart?.();
    },
  };
}

/** The opencode adapter. */
export const opencodeEngine: EngineAdapter = {
  ...opencodeFacts,
  acp,
  checkedVersions: OPENCODE_VERSION,
  workspacePathProblem: percentEncodedPathProblem,
  prepare: prepareOpencode,
  applyAgentOptions: applyOpencodeAgentOptions,
  buildStartArgs: buildOpencodeStartArgs,
  buildResumeArgs: buildOpencodeResumeArgs,
  recoverSession: recoverOpencodeSession,
};
