/**
 * Enforced-only config for iFlow (a Gemini CLI fork): `~/.iflow/settings.json` keys `selectedAuthType`,
 * `baseUrl`, `apiKey`, `modelName` point it at an OpenAI-compatible endpoint; other keys are kept. Trusted
 * folders follow the Gemini CLI layout (`~/.iflow/trustedFolders.json`, `{ "<dir>": "TRUST_FOLDER" }`).
 * From iFlow's documented settings; not verified against a binary here (none can be installed).
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import { AgentHarnessError } from '../../errors/index.js';
import type { ModelMode } from '../../protocol/index.js';
import { writeFileAtomic } from '../../runtime/atomic-write.js';
import { withFileLock } from '../../runtime/file-lock.js';

/** Model name written for the scripted model. */
export const IFLOW_SCRIPTED_MODEL = 'agent-harness-scripted';

type Json = Record<string, unknown>;

async function editJson(file: string, edit: (doc: Json) => void): Promise<void> {
  try {
    await withFileLock(file, async () => {
      let doc: Json = {};
      try {
        doc = JSON.parse(await fs.readFile(file, 'utf8')) as Json;
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'ENOENT') {
          throw new AgentHarnessError('ENGINE_CONFIG_INJECTION_FAILED', `${file} is not valid JSON: ${(error as Error).message}`, { cause: error, details: { config_path: file } });
        }
      }
      edit(doc);
      await writeFileAtomic(file, `${JSON.stringify(doc, null, 2)}\n`);
    });
  } catch (error) {
    if (error instanceof AgentHarnessError) throw error;
    throw new AgentHarnessError('ENGINE_CONFIG_INJECTION_FAILED', `Could not update ${file}: ${(error as Error).message}`, { cause: error, details: { config_path: file } });
  }
}

/** Writes the enforced settings; returns the settings path. */
export async function writeIflowSettings(iflowHome: string, modelMode: ModelMode, modelBaseUrl: string | null): Promise<string> {
  const file = path.join(iflowHome, 'settings.json');
  await editJson(file, (doc) => {
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
  await editJson(file, (doc) => {
    doc[dir] = 'TRUST_FOLDER';
  });
  return file;
}

/** Removes the trust entry of `dir`. */
export async function removeIflowTrust(file: string, dir: string): Promise<void> {
  await editJson(file, (doc) => {
    delete doc[dir];
  });
}
