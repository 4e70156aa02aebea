/**
 * Enforced-only config injection for GitHub Copilot CLI 1.0.102 (seed 001, Decision 11).
 *
 * - `COPILOT_HOME` (`<agentHome>/.copilot`, its default under the managed HOME, set explicitly so nothing else is
 *   read): config, sessions (`session-state/<id>/events.jsonl`), logs, personal skills and `mcp-config.json` live here.
 * - `$COPILOT_HOME/settings.json` (user settings; `copilot help config`): the harness writes only the keys it
 *   enforces — `autoUpdate: false` — and registers the run dir in `trustedFolders` for the attempt (prompt mode does
 *   not ask). Every other key is kept as it was.
 * - `$COPILOT_HOME/config.json` (copilot's own state, JSON under two `//` comment lines): its `trustedFolders` is where
 *   the TUI looks (and where its "Yes, and remember this folder" writes); without the run dir there, the TUI opens on
 *   "Confirm folder trust" and never sends the prompt. The run dir is listed there too for the attempt.
 * - The model is not in a file: offline BYOK mode is environment only (`copilot help environment`):
 *   `COPILOT_OFFLINE=true` (no GitHub auth, telemetry, web tools, GitHub MCP server or auto-update),
 *   `COPILOT_PROVIDER_BASE_URL=<model>/v1`, `COPILOT_PROVIDER_TYPE=openai` (Chat Completions), `COPILOT_MODEL`, and a
 *   placeholder `COPILOT_PROVIDER_API_KEY`. The CLI masks that key's value wherever it appears in its output (a key
 *   `x` turned every `x` into `******`), so the placeholder is long and random: it never occurs in real output.
 */
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { AgentHarnessError } from '../../errors/index.js';
import { writeFileAtomic } from '../../runtime/atomic-write.js';
import { type ConfigDoc, type ConfigFormat, JSON_CONFIG, readConfigFile } from '../../runtime/config-file.js';

/** The one model name of the scripted provider. */
export const COPILOT_SCRIPTED_MODEL = 'scripted';

/** `$COPILOT_HOME` under the managed HOME. */
export function copilotHome(agentHome: string): string {
  return path.join(agentHome, '.copilot');
}

/** A placeholder provider key no real output contains (48 hex digits after a fixed prefix). */
export function placeholderCopilotKey(): string {
  return `agent-harness-${randomBytes(24).toString('hex')}`;
}

/** The env that points copilot at the scripted model server at `baseUrl`. */
export function copilotProviderEnv(baseUrl: string): Record<string, string> {
  return {
    COPILOT_OFFLINE: 'true',
    COPILOT_PROVIDER_BASE_URL: `${baseUrl}/v1`,
    COPILOT_PROVIDER_TYPE: 'openai',
    COPILOT_PROVIDER_API_KEY: placeholderCopilotKey(),
    COPILOT_MODEL: COPILOT_SCRIPTED_MODEL,
  };
}

/**
 * Applies `edit` to the JSON file `file` and writes it back atomically when it changed. Not under the harness's file
 * lock (`editConfigFile`): copilot 1.0.102 leaves a plain file `settings.json.lock` beside it, where that lock makes
 * its lock directory, so the lock could never be taken. None is needed: the file is in the run's own COPILOT_HOME,
 * and a run's attempts (the only writers, copilot itself included) run one at a time.
 */
async function editSettings(
  file: string,
  edit: (doc: ConfigDoc) => void,
  format: ConfigFormat = JSON_CONFIG,
): Promise<void> {
  try {
    const doc = await readConfigFile(file, format);
    const before = JSON.stringify(doc);
    edit(doc);
    if (JSON.stringify(doc) !== before) await writeFileAtomic(file, format.stringify(doc));
  } catch (error) {
    if (error instanceof AgentHarnessError) throw error;
    throw new AgentHarnessError(
      'ENGINE_CONFIG_INJECTION_FAILED',
      `Could not update ${file}: ${(error as Error).message}`,
      {
        cause: error,
        details: { config_path: file },
      },
    );
  }
}

/** The header copilot 1.0.102 writes above its `config.json`. */
const CONFIG_HEADER = '// User settings belong in settings.json.\n// This file is managed automatically.\n';

/** copilot's `config.json`: JSON under whole-line `//` comments (its header, written back as copilot writes it). */
const COPILOT_STATE_CONFIG: ConfigFormat = {
  name: 'JSON (copilot config.json)',
  parse: (text) => {
    const json = text.replace(/^\s*\/\/.*$/gm, '').trim();
    return json === '' ? {} : JSON.parse(json);
  },
  stringify: (doc) => `${CONFIG_HEADER}${JSON.stringify(doc, null, 2)}\n`,
};

/** `$COPILOT_HOME/config.json`, where the TUI reads its trusted folders. */
export function copilotStateConfig(home: string): string {
  return path.join(home, 'config.json');
}

function trust(runDir: string): (doc: ConfigDoc) => void {
  return (doc) => {
    const trusted = Array.isArray(doc.trustedFolders) ? doc.trustedFolders : [];
    if (!trusted.includes(runDir)) doc.trustedFolders = [...trusted, runDir];
  };
}

function untrust(runDir: string): (doc: ConfigDoc) => void {
  return (doc) => {
    if (!Array.isArray(doc.trustedFolders)) return;
    const kept = doc.trustedFolders.filter((entry) => entry !== runDir);
    if (kept.length === doc.trustedFolders.length) return;
    if (kept.length > 0) doc.trustedFolders = kept;
    else delete doc.trustedFolders;
  };
}

/**
 * Writes the enforced keys into `$COPILOT_HOME/settings.json` and trusts `runDir` there and in `config.json` (the
 * TUI's); returns the settings file's path.
 */
export async function writeCopilotSettings(home: string, runDir: string): Promise<string> {
  const file = path.join(home, 'settings.json');
  await editSettings(file, (doc) => {
    doc.autoUpdate = false;
    trust(runDir)(doc);
  });
  await editSettings(copilotStateConfig(home), trust(runDir), COPILOT_STATE_CONFIG);
  return file;
}

/** True when `settingsPath`, or the `config.json` beside it (the TUI's), lists `dir` in its `trustedFolders`. */
export async function isCopilotTrusted(settingsPath: string, dir: string): Promise<boolean> {
  const lists = async (file: string, format: ConfigFormat) => {
    const doc = await readConfigFile(file, format).catch(() => ({}) as Record<string, unknown>);
    return Array.isArray(doc.trustedFolders) && doc.trustedFolders.includes(dir);
  };
  return (
    (await lists(settingsPath, JSON_CONFIG)) ||
    (await lists(copilotStateConfig(path.dirname(settingsPath)), COPILOT_STATE_CONFIG))
  );
}

/** Removes `runDir` from the `trustedFolders` of `settingsPath` and of the `config.json` beside it. Never throws. */
export async function untrustCopilotFolder(settingsPath: string, runDir: string): Promise<void> {
  await editSettings(settingsPath, untrust(runDir)).catch(() => undefined);
  const config = copilotStateConfig(path.dirname(settingsPath));
  await editSettings(config, untrust(runDir), COPILOT_STATE_CONFIG).catch(() => undefined);
}
