/**
 * Enforced-only config injection for gemini-cli 0.61.0 (seed 001, Decision 11), as it reads it
 * (docs `reference/configuration.md`, probes of the pinned CLI):
 *
 * - `<run dir>/.gemini/settings.json` (workspace settings; seed 001 Decision 11: gemini's config lives in the run
 *   directory, so concurrent runs never see each other's settings, and the shared managed HOME is not edited):
 *   the harness writes only the keys it enforces —
 *   `general.enableAutoUpdate` / `enableAutoUpdateNotification` false (no npm registry check),
 *   `privacy.usageStatisticsEnabled` false and `telemetry.enabled` false (no Clearcut/OTLP export); in scripted
 *   mode also `security.auth.selectedType: "gemini-api-key"` (what makes `GOOGLE_GEMINI_BASE_URL` apply) and
 *   `general.maxAttempts: 1` (the CLI otherwise retries a scripted 429/500 ten times with backoff). Every other
 *   key is kept as it was.
 * - `~/.gemini/trustedFolders.json` (`{"<dir>": "TRUST_FOLDER"}`): headless gemini refuses an untrusted folder
 *   (exit 55) and ignores `--yolo` and workspace skills there, so the run dir is registered before the attempt
 *   and removed after it.
 */
import path from 'node:path';
import type { ModelMode } from '../../protocol/index.js';
import { childTable, editConfigFile, JSON_CONFIG, readConfigFile } from '../../runtime/config-file.js';

/** Trust level gemini-cli writes for "Trust folder". */
export const GEMINI_TRUST_LEVEL = 'TRUST_FOLDER';

/** The managed home's `.gemini` directory and the trusted-folders file the harness edits there. */
export function geminiConfigPaths(agentHome: string): { geminiDir: string; trustPath: string } {
  const geminiDir = path.join(agentHome, '.gemini');
  return { geminiDir, trustPath: path.join(geminiDir, 'trustedFolders.json') };
}

/** The run's own settings file (gemini's workspace settings), where the enforced keys go. */
export function geminiSettingsPath(runDir: string): string {
  return path.join(runDir, '.gemini', 'settings.json');
}

/** Writes the enforced keys into `settings.json`. */
export async function writeGeminiSettings(settingsPath: string, modelMode: ModelMode): Promise<void> {
  await editConfigFile(settingsPath, JSON_CONFIG, (doc) => {
    const general = childTable(doc, 'general');
    general.enableAutoUpdate = false;
    general.enableAutoUpdateNotification = false;
    childTable(doc, 'privacy').usageStatisticsEnabled = false;
    childTable(doc, 'telemetry').enabled = false;
    if (modelMode === 'live') {
      if (general.maxAttempts === 1) delete general.maxAttempts;
      return;
    }
    childTable(childTable(doc, 'security'), 'auth').selectedType = 'gemini-api-key';
    general.maxAttempts = 1;
  });
}

/** Registers `dir` as a trusted folder. */
export async function registerGeminiTrust(trustPath: string, dir: string): Promise<void> {
  await editConfigFile(trustPath, JSON_CONFIG, (doc) => {
    doc[dir] = GEMINI_TRUST_LEVEL;
  });
}

/** Removes the trust entry of `dir` (leaves other folders alone). */
export async function removeGeminiTrust(trustPath: string, dir: string): Promise<void> {
  await editConfigFile(trustPath, JSON_CONFIG, (doc) => {
    delete doc[dir];
  });
}

/** True when `dir` is currently registered as trusted in `trustPath`. */
export async function isGeminiTrusted(trustPath: string, dir: string): Promise<boolean> {
  return (await readConfigFile(trustPath, JSON_CONFIG))[dir] === GEMINI_TRUST_LEVEL;
}
