/**
 * Enforced-only config injection for Qwen Code 0.24.4 (a Gemini CLI fork: the same layout under `.qwen`), as it
 * reads it (its settings schema, probes of the pinned CLI):
 *
 * - `<run dir>/.qwen/settings.json` (workspace settings; seed 001 Decision 11: the config lives in the run
 *   directory, so concurrent runs never see each other's settings): the harness writes only the keys it enforces —
 *   `general.enableAutoUpdate` false (no npm registry check), `privacy.usageStatisticsEnabled` false and
 *   `telemetry.enabled` false (no usage export); in scripted mode also `security.auth.selectedType: "openai"` (what
 *   makes `OPENAI_BASE_URL` / `OPENAI_API_KEY` / `OPENAI_MODEL` apply) and `model.generationConfig.maxRetries: 0`
 *   (the CLI otherwise retries a scripted 429/500 with backoff for minutes), and `memory.enableManagedAutoMemory` /
 *   `enableManagedAutoDream` false: after every turn that ends, qwen otherwise runs a background "memory
 *   extraction" subagent, a second model request (with tools) that the scripted model answers with the script's next
 *   turn and whose tokens count in the run's usage; it cost about 0.5 s of the 4.1 s of CPU of a scripted attempt
 *   (medians of 7 paired runs, 3.6 s without it). Live, memory is the user's: the keys are not written. Every other
 *   key is kept as it was.
 * - `~/.qwen/trustedFolders.json` (`{"<dir>": "TRUST_FOLDER"}`, read from `QWEN_CODE_TRUSTED_FOLDERS_PATH`): folder
 *   trust is off by default in 0.24.4, but a user or system setting can turn it on, and an untrusted folder then
 *   loses `--yolo` and its workspace settings and skills, so the run dir is registered before the attempt and
 *   removed after it.
 */
import path from 'node:path';
import type { ModelMode } from '../../protocol/index.js';
import { childTable, editConfigFile, JSON_CONFIG, readConfigFile } from '../../runtime/config-file.js';

/**
 * The settings schema version Qwen Code 0.24.4 stamps on a settings file (`$version`): written with the enforced
 * keys, so the CLI does not migrate (rewrite) the run's settings file during the attempt, which would show in the
 * attempt's file diff as the agent's change.
 */
export const QWEN_SETTINGS_VERSION = 4;

/** Trust level Qwen Code writes for "Trust folder" (the Gemini CLI's). */
export const QWEN_TRUST_LEVEL = 'TRUST_FOLDER';

/** The managed home's `.qwen` directory and the trusted-folders file the harness edits there. */
export function qwenConfigPaths(agentHome: string): { qwenDir: string; trustPath: string } {
  const qwenDir = path.join(agentHome, '.qwen');
  return { qwenDir, trustPath: path.join(qwenDir, 'trustedFolders.json') };
}

/** The run's own settings file (qwen's workspace settings), where the enforced keys go. */
export function qwenSettingsPath(runDir: string): string {
  return path.join(runDir, '.qwen', 'settings.json');
}

/** Writes the enforced keys into `settings.json`. */
export async function writeQwenSettings(settingsPath: string, modelMode: ModelMode): Promise<void> {
  await editConfigFile(settingsPath, JSON_CONFIG, (doc) => {
    if (typeof doc.$version !== 'number') doc.$version = QWEN_SETTINGS_VERSION;
    childTable(doc, 'general').enableAutoUpdate = false;
    childTable(doc, 'privacy').usageStatisticsEnabled = false;
    childTable(doc, 'telemetry').enabled = false;
    const generation = childTable(childTable(doc, 'model'), 'generationConfig');
    if (modelMode === 'live') {
      if (generation.maxRetries === 0) delete generation.maxRetries;
      return;
    }
    childTable(childTable(doc, 'security'), 'auth').selectedType = 'openai';
    generation.maxRetries = 0;
    // No memory extraction from a scripted conversation (see the file comment).
    const memory = childTable(doc, 'memory');
    memory.enableManagedAutoMemory = false;
    memory.enableManagedAutoDream = false;
  });
}

/** Registers `dir` as a trusted folder. */
export async function registerQwenTrust(trustPath: string, dir: string): Promise<void> {
  await editConfigFile(trustPath, JSON_CONFIG, (doc) => {
    doc[dir] = QWEN_TRUST_LEVEL;
  });
}

/** Removes the trust entry of `dir` (leaves other folders alone). */
export async function removeQwenTrust(trustPath: string, dir: string): Promise<void> {
  await editConfigFile(trustPath, JSON_CONFIG, (doc) => {
    delete doc[dir];
  });
}

/** True when `dir` is currently registered as trusted in `trustPath`. */
export async function isQwenTrusted(trustPath: string, dir: string): Promise<boolean> {
  return (await readConfigFile(trustPath, JSON_CONFIG))[dir] === QWEN_TRUST_LEVEL;
}
