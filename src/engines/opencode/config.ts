/**
 * Enforced-only config injection for opencode 1.18.33 (seed 001, Decision 11).
 *
 * - `$XDG_CONFIG_HOME/opencode/opencode.json` (the global config; the harness sets XDG_CONFIG_HOME to
 *   `<agentHome>/.config`): the harness writes only the keys it enforces — `autoupdate: false`,
 *   `share: "disabled"`, `permission.bash/edit = "allow"` (a headless run never asks), and in scripted mode
 *   the `provider.agent-harness` table (`npm: "@ai-sdk/openai-compatible"`, bundled in the binary) plus
 *   `model`/`small_model`. Every other key is kept as it was.
 * - The per-attempt model URL is not in the file: `options.baseURL` is `{env:AGENT_HARNESS_OPENCODE_BASE_URL}`
 *   (opencode substitutes `{env:…}` in config files), so concurrent runs never fight over the file.
 * - Offline guard: for every config directory (the global one and `<cwd>/.opencode`) opencode starts a
 *   background `npm install @opencode-ai/plugin` against registry.npmjs.org unless the directory already has a
 *   `node_modules/` and a `package-lock.json` whose root lists every wanted dependency (upstream `Npm.install`
 *   "checkNodeModules"/"checkDirty"). The harness writes that stub, so no install is attempted.
 *
 * opencode has no per-directory trust registry. Source: probes of the pinned binary against the scripted
 * model server (requests, egress log and `~/.local/share/opencode/log`).
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import type { ModelMode } from '../../protocol/index.js';
import { childTable, editConfigFile, JSON_CONFIG, readConfigFile, type ConfigDoc } from '../../runtime/config-file.js';

/** Id of the provider table the harness owns. */
export const OPENCODE_PROVIDER_ID = 'agent-harness';
/** The one model of the harness provider. */
export const OPENCODE_SCRIPTED_MODEL = 'scripted';
/** Env var the provider's base URL is read from (`{env:…}` in the config file). */
export const OPENCODE_BASE_URL_ENV = 'AGENT_HARNESS_OPENCODE_BASE_URL';
/** Env var the provider's (fake) API key is read from. */
export const OPENCODE_PROVIDER_KEY_ENV = 'AGENT_HARNESS_MODEL_KEY';
/** The dependency opencode installs into every config directory. */
const PLUGIN_PACKAGE = '@opencode-ai/plugin';

type Json = ConfigDoc;

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Writes the enforced keys into `<configDir>/opencode.json`; returns its path. */
export async function writeOpencodeConfig(configDir: string, modelMode: ModelMode): Promise<string> {
  const configPath = path.join(configDir, 'opencode.json');
  const ours = `${OPENCODE_PROVIDER_ID}/${OPENCODE_SCRIPTED_MODEL}`;
  await editConfigFile(configPath, JSON_CONFIG, (doc) => {
    doc.$schema ??= 'https://opencode.ai/config.json';
    doc.autoupdate = false;
    doc.share = 'disabled';
    const permission = childTable(doc, 'permission');
    permission.bash = 'allow';
    permission.edit = 'allow';
    const providers = childTable(doc, 'provider');
    if (modelMode === 'live') {
      delete providers[OPENCODE_PROVIDER_ID];
      if (Object.keys(providers).length === 0) delete doc.provider;
      if (doc.model === ours) delete doc.model;
      if (doc.small_model === ours) delete doc.small_model;
      return;
    }
    providers[OPENCODE_PROVIDER_ID] = {
      npm: '@ai-sdk/openai-compatible',
      name: 'agent-harness scripted model',
      options: { baseURL: `{env:${OPENCODE_BASE_URL_ENV}}`, apiKey: `{env:${OPENCODE_PROVIDER_KEY_ENV}}` },
      models: { [OPENCODE_SCRIPTED_MODEL]: { name: 'agent-harness scripted model' } },
    };
    doc.model = ours;
    doc.small_model = ours;
  });
  return configPath;
}

/**
 * Makes opencode skip its background `npm install @opencode-ai/plugin` in `dir`: ensures `node_modules/` and a
 * `package-lock.json` whose root lists the plugin and every dependency of `dir/package.json`.
 */
export async function stubOpencodeDependencies(dir: string): Promise<void> {
  const lockPath = path.join(dir, 'package-lock.json');
  await fs.mkdir(path.join(dir, 'node_modules'), { recursive: true });
  const manifest = await readConfigFile(path.join(dir, 'package.json'), JSON_CONFIG).catch(() => ({}) as Json);
  const wanted = new Set<string>([PLUGIN_PACKAGE]);
  for (const key of ['dependencies', 'devDependencies', 'peerDependencies', 'optionalDependencies']) {
    const deps = manifest[key];
    if (isObject(deps)) for (const name of Object.keys(deps)) wanted.add(name);
  }
  await editConfigFile(lockPath, JSON_CONFIG, (doc) => {
    doc.lockfileVersion ??= 3;
    const root = childTable(childTable(doc, 'packages'), '');
    const listed = new Set<string>();
    for (const key of ['dependencies', 'devDependencies', 'peerDependencies', 'optionalDependencies']) {
      const deps = root[key];
      if (isObject(deps)) for (const name of Object.keys(deps)) listed.add(name);
    }
    const deps = childTable(root, 'dependencies');
    for (const name of wanted) if (!listed.has(name)) deps[name] = '*';
  });
}
