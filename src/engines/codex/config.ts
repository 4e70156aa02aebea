/**
 * Enforced-only config injection for codex (seed 001, Decision 11), as codex 0.169.0 reads it:
 *
 * - `$CODEX_HOME/config.toml` (base): the harness writes only the keys it enforces — update check off,
 *   `[analytics] enabled=false` (else an OTLP export to ab.chatgpt.com at exit), `[features] plugins=false`
 *   (else a curated-plugin sync against github.com), the `[model_providers.agent-harness]` table, and the
 *   run dir's `[projects."<dir>"] trust_level`. Every other key is kept as it was.
 * - `$CODEX_HOME/<profile>.config.toml`: the harness profile (codex 0.169 "profile v2": a legacy
 *   `profile = "x"` key is rejected; `--profile x` layers `<x>.config.toml` over the base), owned whole by the
 *   harness and rewritten for every attempt. Other profiles are never touched.
 * - The per-attempt model URL is passed as `-c model_providers.agent-harness.base_url=…`, so concurrent runs
 *   with different model servers never fight over the file.
 *
 * Source: shared/research/codex-claude.md §2 and a probe of `codex --profile` on 0.169.0.
 */
import path from 'node:path';
import { AgentHarnessError } from '../../errors/index.js';
import type { ModelMode } from '../../protocol/index.js';
import { childTable, editConfigFile, readConfigFile, TOML_CONFIG, type ConfigDoc } from '../../runtime/config-file.js';

/** Name of the model provider table the harness owns. */
export const CODEX_PROVIDER_ID = 'agent-harness';
/** Env var codex reads the (fake) model key from. */
export const CODEX_PROVIDER_KEY_ENV = 'AGENT_HARNESS_MODEL_KEY';
/** A model slug from `codex debug models --bundled` with no `upgrade` (an unknown slug makes codex send fewer tools; one with an upgrade makes the TUI open a "Meet …" migration prompt). */
export const CODEX_SCRIPTED_MODEL = 'gpt-6-sol';

/** `$CODEX_HOME/config.toml`, the base config (the trust entries live there). */
export function codexConfigPath(codexHome: string): string {
  return path.join(codexHome, 'config.toml');
}

/** Writes the enforced base keys and the harness profile (two files, at once). Returns the paths written. */
export async function writeCodexConfig(
  codexHome: string,
  profile: string,
  modelMode: ModelMode,
): Promise<{ configPath: string; profilePath: string }> {
  if (!/^[A-Za-z0-9][A-Za-z0-9_-]*$/.test(profile)) {
    throw new AgentHarnessError(
      'CONFIG_INVALID',
      `Codex profile name ${JSON.stringify(profile)} is not a plain name ([A-Za-z0-9_-]).`,
    );
  }
  const configPath = codexConfigPath(codexHome);
  const profilePath = path.join(codexHome, `${profile}.config.toml`);
  const base = editConfigFile(configPath, TOML_CONFIG, (doc) => {
    doc.check_for_update_on_startup = false;
    childTable(doc, 'analytics').enabled = false;
    childTable(doc, 'features').plugins = false;
    childTable(doc, 'model_providers')[CODEX_PROVIDER_ID] = {
      name: 'agent-harness scripted model',
      base_url: 'http://127.0.0.1:9/v1', // replaced per attempt by -c
      env_key: CODEX_PROVIDER_KEY_ENV,
      wire_api: 'responses',
      request_max_retries: 0,
      stream_max_retries: 0,
    };
  });
  // The harness profile is the harness's own file: rewritten whole, so what an interactive attempt's TUI saved into
  // it (`model`, `[tui]`, `[notice]`…) never carries into the next attempt.
  const harnessProfile = editConfigFile(profilePath, TOML_CONFIG, (doc) => {
    for (const key of Object.keys(doc)) delete doc[key];
    doc.sandbox_mode = 'workspace-write';
    doc.approval_policy = 'never';
    if (modelMode === 'live') {
      delete doc.model_provider;
      delete doc.model;
    } else {
      doc.model_provider = CODEX_PROVIDER_ID;
      doc.model = CODEX_SCRIPTED_MODEL;
    }
  });
  await Promise.all([base, harnessProfile]);
  return { configPath, profilePath };
}

/**
 * The `-c` value that trusts `dir` for one codex process: `projects={"<dir>"={trust_level="trusted"}}` (an inline
 * table: `-c` splits a dotted key at every dot, and a path has dots). The path as a JSON string is a TOML basic string.
 */
export function codexTrustOverride(dir: string): string {
  return `projects={${JSON.stringify(dir)}={trust_level="trusted"}}`;
}

/** Registers `dir` as a trusted project in `config.toml`. */
export async function registerCodexTrust(configPath: string, dir: string): Promise<void> {
  await editConfigFile(configPath, TOML_CONFIG, (doc) => {
    childTable(doc, 'projects')[dir] = { trust_level: 'trusted' };
  });
}

/** Removes the trust entry of `dir` (leaves other projects alone). */
export async function removeCodexTrust(configPath: string, dir: string): Promise<void> {
  await editConfigFile(configPath, TOML_CONFIG, (doc) => {
    const projects = doc.projects;
    if (projects && typeof projects === 'object') {
      delete (projects as ConfigDoc)[dir];
      if (Object.keys(projects).length === 0) delete doc.projects;
    }
  });
}

/** True when `dir` is currently registered as trusted in `configPath`. */
export async function isCodexTrusted(configPath: string, dir: string): Promise<boolean> {
  const doc = await readConfigFile(configPath, TOML_CONFIG);
  const projects = doc.projects as ConfigDoc | undefined;
  const entry = projects?.[dir] as ConfigDoc | undefined;
  return entry?.trust_level === 'trusted';
}
