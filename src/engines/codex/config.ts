/**
 * Enforced-only config injection for codex (seed 001, Decision 11), as codex 0.169.0 reads it:
 *
 * - `$CODEX_HOME/config.toml` (base): the harness writes only the keys it enforces — update check off,
 *   `[analytics] enabled=false` (else an OTLP export to ab.chatgpt.com at exit), `[features] plugins=false`
 *   (else a curated-plugin sync against github.com), the `[model_providers.agent-harness]` table, and the
 *   run dir's `[projects."<dir>"] trust_level`. Every other key is kept as it was.
 * - `$CODEX_HOME/<profile>.config.toml`: the harness profile (codex 0.169 "profile v2": a legacy
 *   `profile = "x"` key is rejected; `--profile x` layers `<x>.config.toml` over the base). Other profiles are
 *   never touched.
 * - The per-attempt model URL is passed as `-c model_providers.agent-harness.base_url=…`, so concurrent runs
 *   with different model servers never fight over the file.
 *
 * Source: shared/research/codex-claude.md §2 and a probe of `codex --profile` on 0.169.0.
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import { parse as parseToml, stringify as stringifyToml } from 'smol-toml';
import { AgentHarnessError } from '../../errors/index.js';
import type { ModelMode } from '../../protocol/index.js';
import { writeFileAtomic } from '../../runtime/atomic-write.js';
import { withFileLock } from '../../runtime/file-lock.js';

/** Name of the model provider table the harness owns. */
export const CODEX_PROVIDER_ID = 'agent-harness';
/** Env var codex reads the (fake) model key from. */
export const CODEX_PROVIDER_KEY_ENV = 'AGENT_HARNESS_MODEL_KEY';
/** A model slug from `codex debug models --bundled` (an unknown slug makes codex send fewer tools). */
export const CODEX_SCRIPTED_MODEL = 'gpt-5.5';

type TomlTable = Record<string, unknown>;

async function readToml(file: string): Promise<TomlTable> {
  let text: string;
  try {
    text = await fs.readFile(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return {};
    throw error;
  }
  try {
    return parseToml(text) as TomlTable;
  } catch (error) {
    throw new AgentHarnessError('ENGINE_CONFIG_INJECTION_FAILED', `${file} is not valid TOML: ${(error as Error).message}`, { cause: error, details: { config_path: file } });
  }
}

function table(parent: TomlTable, key: string): TomlTable {
  const current = parent[key];
  if (current && typeof current === 'object' && !Array.isArray(current)) return current as TomlTable;
  const created: TomlTable = {};
  parent[key] = created;
  return created;
}

async function editToml(file: string, edit: (doc: TomlTable) => void): Promise<void> {
  try {
    await withFileLock(file, async () => {
      const doc = await readToml(file);
      edit(doc);
      await writeFileAtomic(file, stringifyToml(doc));
    });
  } catch (error) {
    if (error instanceof AgentHarnessError) throw error;
    throw new AgentHarnessError('ENGINE_CONFIG_INJECTION_FAILED', `Could not update ${file}: ${(error as Error).message}`, { cause: error, details: { config_path: file } });
  }
}

/** Writes the enforced base keys and the harness profile. Returns the paths written. */
export async function writeCodexConfig(codexHome: string, profile: string, modelMode: ModelMode): Promise<{ configPath: string; profilePath: string }> {
  if (!/^[A-Za-z0-9][A-Za-z0-9_-]*$/.test(profile)) {
    throw new AgentHarnessError('CONFIG_INVALID', `Codex profile name ${JSON.stringify(profile)} is not a plain name ([A-Za-z0-9_-]).`);
  }
  const configPath = path.join(codexHome, 'config.toml');
  const profilePath = path.join(codexHome, `${profile}.config.toml`);
  await editToml(configPath, (doc) => {
    doc.check_for_update_on_startup = false;
    table(doc, 'analytics').enabled = false;
    table(doc, 'features').plugins = false;
    table(doc, 'model_providers')[CODEX_PROVIDER_ID] = {
      name: 'agent-harness scripted model',
      base_url: 'http://127.0.0.1:9/v1', // replaced per attempt by -c
      env_key: CODEX_PROVIDER_KEY_ENV,
      wire_api: 'responses',
      request_max_retries: 0,
      stream_max_retries: 0,
    };
  });
  await editToml(profilePath, (doc) => {
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
  return { configPath, profilePath };
}

/** Registers `dir` as a trusted project in `config.toml`. */
export async function registerCodexTrust(configPath: string, dir: string): Promise<void> {
  await editToml(configPath, (doc) => {
    table(doc, 'projects')[dir] = { trust_level: 'trusted' };
  });
}

/** Removes the trust entry of `dir` (leaves other projects alone). */
export async function removeCodexTrust(configPath: string, dir: string): Promise<void> {
  await editToml(configPath, (doc) => {
    const projects = doc.projects;
    if (projects && typeof projects === 'object') {
      delete (projects as TomlTable)[dir];
      if (Object.keys(projects).length === 0) delete doc.projects;
    }
  });
}

/** True when `dir` is currently registered as trusted in `configPath`. */
export async function isCodexTrusted(configPath: string, dir: string): Promise<boolean> {
  const doc = await readToml(configPath);
  const projects = doc.projects as TomlTable | undefined;
  const entry = projects?.[dir] as TomlTable | undefined;
  return entry?.trust_level === 'trusted';
}
