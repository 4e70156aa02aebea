/**
 * An isolated home for `@openai/codex-sdk` (0.163.0, `sdk/typescript` of openai/codex) driving the pinned codex
 * binary against a scripted model server: nothing of the host's `~/.codex`, no vendor key, no network.
 *
 * Upstream facts this relies on (read in `node_modules/@openai/codex-sdk/dist/index.js`):
 * - `codexPathOverride` is spawned as is (`child_process.spawn(path, args)`, no shell); without it the SDK runs
 *   its own nested `@openai/codex` (0.163.0), not the pinned 0.171.0, so the override is required here;
 * - `env`, when given, is the child's whole environment (`process.env` is not inherited);
 * - `config` is flattened into `--config key=value` TOML literals, the way the harness passes its base URL.
 *
 * The config mirrors what `src/engines/codex/config.ts` writes, written by hand so that this side owes nothing to
 * the harness's code: the `agent-harness` provider on `<server>/v1` over the Responses API, the scripted slug.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { CodexOptions } from '@openai/codex-sdk';

/** The pinned CLI launcher the harness itself resolves first (`node_modules/.bin/codex` → `@openai/codex` 0.171.0). */
export const PINNED_CODEX_BIN = path.resolve('node_modules/.bin/codex');

/** A temporary HOME/CODEX_HOME and working directory for one SDK-driven thread. */
export interface CodexSdkHome {
  /** HOME of the codex process. */
  home: string;
  /** CODEX_HOME (`<home>/.codex`): config.toml, sessions/. */
  codexHome: string;
  /** The thread's working directory (trusted in config.toml). */
  workDir: string;
  /** The whole environment of the codex process. */
  env: Record<string, string>;
  /** `CodexOptions.config`: the model provider, pointed at `modelUrl`. */
  config: NonNullable<CodexOptions['config']>;
  /** Removes every directory. */
  cleanup(): void;
}

const PROVIDER_ID = 'agent-harness';
const KEY_ENV = 'AGENT_HARNESS_MODEL_KEY';

/** Creates the home; `modelUrl` is the scripted model server's origin (no `/v1`). */
export function createCodexSdkHome(modelUrl: string): CodexSdkHome {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'ah-codex-sdk-'));
  const home = path.join(root, 'home');
  const codexHome = path.join(home, '.codex');
  const workDir = path.join(root, 'work');
  const tmpDir = path.join(root, 'tmp');
  for (const dir of [codexHome, workDir, tmpDir]) fs.mkdirSync(dir, { recursive: true });
  // Keys that make codex 0.169 phone home when absent (update check, analytics export, plugin sync), plus trust.
  fs.writeFileSync(
    path.join(codexHome, 'config.toml'),
    [
      'check_for_update_on_startup = false',
      '[analytics]',
      'enabled = false',
      '[features]',
      'plugins = false',
      `[projects.${JSON.stringify(workDir)}]`,
      'trust_level = "trusted"',
      '',
    ].join('\n'),
  );
  const env: Record<string, string> = {
    // node is on PATH for the `#!/usr/bin/env node` launcher.
    PATH: [path.dirname(process.execPath), '/usr/local/bin', '/usr/bin', '/bin'].join(path.delimiter),
    HOME: home,
    CODEX_HOME: codexHome,
    XDG_CONFIG_HOME: path.join(home, '.config'),
    XDG_DATA_HOME: path.join(home, '.local', 'share'),
    XDG_STATE_HOME: path.join(home, '.local', 'state'),
    XDG_CACHE_HOME: path.join(home, '.cache'),
    TMPDIR: tmpDir,
    [KEY_ENV]: 'sk-agent-harness-scripted',
    NO_PROXY: '127.0.0.1,localhost,::1',
    no_proxy: '127.0.0.1,localhost,::1',
  };
  // As the harness does: any other connection goes to the model server, which refuses and records it.
  for (const name of ['HTTPS_PROXY', 'HTTP_PROXY', 'ALL_PROXY', 'https_proxy', 'http_proxy', 'all_proxy'])
    env[name] = modelUrl;
  const config: NonNullable<CodexOptions['config']> = {
    model_provider: PROVIDER_ID,
    model: 'gpt-6-sol',
    model_providers: {
      [PROVIDER_ID]: {
        name: 'agent-harness scripted model',
        base_url: `${modelUrl}/v1`,
        env_key: KEY_ENV,
        wire_api: 'responses',
        request_max_retries: 0,
        stream_max_retries: 0,
      },
    },
  };
  return { home, codexHome, workDir, env, config, cleanup: () => fs.rmSync(root, { recursive: true, force: true }) };
}

/** Paths of the session files under `codexHome/sessions` (codex writes one `rollout-…-<thread id>.jsonl` per thread). */
export function listCodexSessionFiles(codexHome: string): string[] {
  const dir = path.join(codexHome, 'sessions');
  if (!fs.existsSync(dir)) return [];
  return fs
    .readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.jsonl'))
    .map((f) => path.join(dir, f));
}
