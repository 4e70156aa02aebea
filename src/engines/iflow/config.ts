/**
 * Enforced-only config for iFlow (a Gemini CLI fork): the run's own `<run dir>/.iflow/settings.json` (workspace
 * settings; seed 001 Decision 11: iFlow's config lives in the run directory, so the per-attempt `baseUrl` of one
 * run never reaches another) with keys `selectedAuthType`, `baseUrl`, `apiKey`, `modelName` pointing it at an
 * OpenAI-compatible endpoint; other keys are kept. Trusted
 * folders follow the Gemini CLI layout (`~/.iflow/trustedFolders.json`, `{ "<dir>": "TRUST_FOLDER" }`).
 * From iFlow's documented settings; not verified against a binary here (none can be installed).
 */
import path from 'node:path';
import type { ModelMode } from '../../protocol/index.js';
import { editConfigFile, JSON_CONFIG } from '../../runtime/config-file.js';

/** Model name written for the scripted model. */
export const IFLOW_SCRIPTED_MODEL = 'agent-harness-scripted';

/** Writes the enforced settings into `<settingsDir>/settings.json` (the run's `.iflow`); returns its path. */
export async function writeIflowSettings(
  settingsDir: string,
  modelMode: ModelMode,
  modelBaseUrl: string | null,
): Promise<string> {
  const file = path.join(settingsDir, 'settings.json');
  await editConfigFile(file, JSON_CONFIG, (doc) => {
    if (modelMode !== 'live' && modelBaseUrl) {
      doc.selectedAuthType = 'openai-compatible';
      doc.baseUrl = `${modelBaseUrl}/v1`;
      doc.apiKey = 'sk-agent-harness-scripted';
      doc.modelName = IFLOW_SCRIPTED_MODEL;
    }
    doc.checkpointing = { enabled: false };
    doc.telemetry = { enabled: false };
    doc.usageStatisticsEnabled = false;
    doc.autoUpdate = false;
  });
  return file;
}

/** Registers `dir` as trusted; returns the trusted-folders path. */
export async function registerIflowTrust(iflowHome: string, dir: string): Promise<string> {
  const file = path.join(iflowHome, 'trustedFolders.json');
  await editConfigFile(file, JSON_CONFIG, (doc) => {
    doc[dir] = 'TRUST_FOLDER';
  });
  return file;
}

/** Removes the trust entry of `dir`. */
export async function removeIflowTrust(file: string, dir: string): Promise<void> {
  await editConfigFile(file, JSON_CONFIG, (doc) => {
    delete doc[dir];
  });
}
