/**
 * Enforced-only config injection for claude 2.1.197 (seed 001, Decision 11). claude is pointed at the scripted
 * model by env alone (`ANTHROPIC_BASE_URL`, a fake `ANTHROPIC_API_KEY`, `CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC`
 * — see index.ts), so no settings file is written. `CLAUDE_CONFIG_DIR` moves everything claude keeps
 * (`.claude.json`, `projects/` sessions, `skills/`) into the managed home.
 *
 * Trust: claude records the workspace-trust answer per directory in `$CLAUDE_CONFIG_DIR/.claude.json`,
 * `projects["<dir>"].hasTrustDialogAccepted` (the key is in the binary; `-p` runs skip the dialog, but
 * project settings and hooks are only honoured for trusted directories). The harness sets it for the run dir
 * and removes only that key afterwards: claude keeps other per-project state in the same entry.
 *
 * Source: shared/research/codex-claude.md §2, §4, §6 and probes of the pinned binary.
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import { AgentHarnessError } from '../../errors/index.js';
import { assertAgentPathSafe } from '../../runtime/agent-writable.js';
import { writeFileAtomic } from '../../runtime/atomic-write.js';
import { MAX_CONFIG_BYTES, readInputText } from '../../runtime/bounded-input.js';
import { withFileLock } from '../../runtime/file-lock.js';

type Json = Record<string, unknown>;

/** The key claude stores a directory's trust answer under. */
export const CLAUDE_TRUST_KEY = 'hasTrustDialogAccepted';

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Path of claude's state file inside its config dir. */
export function claudeStatePath(configDir: string): string {
  return path.join(configDir, '.claude.json');
}

async function readJson(file: string): Promise<Json> {
  assertAgentPathSafe(file);
  let text: string;
  try {
    // In the engine's home, which the agent can write: a FIFO put there is refused, never waited on.
    text = await readInputText(file, {
      what: 'claude config file',
      maxBytes: MAX_CONFIG_BYTES,
      unreadableCode: 'ENGINE_CONFIG_INJECTION_FAILED',
    });
  } catch (error) {
    if (((error as Error).cause as NodeJS.ErrnoException | undefined)?.code === 'ENOENT') return {};
    throw error;
  }
  if (text.trim() === '') return {};
  try {
    const value: unknown = JSON.parse(text);
    if (isObject(value)) return value;
  } catch {
    // reported below
  }
  throw new AgentHarnessError('ENGINE_CONFIG_INJECTION_FAILED', `${file} is not a JSON object.`, {
    details: { config_path: file },
  });
}

async function editJson(file: string, edit: (doc: Json) => void): Promise<void> {
  try {
    await fs.mkdir(path.dirname(file), { recursive: true });
    await withFileLock(file, async () => {
      const doc = await readJson(file);
      edit(doc);
      // Not fsynced: claude's own state, whose trust key the harness sets again before each attempt.
      await writeFileAtomic(file, `${JSON.stringify(doc, null, 2)}\n`, { durable: false });
    });
  } catch (error) {
    if (error instanceof AgentHarnessError) throw error;
    throw new AgentHarnessError(
      'ENGINE_CONFIG_INJECTION_FAILED',
      `Could not update ${file}: ${(error as Error).message}`,
      { cause: error, details: { config_path: file } },
    );
  }
}

/** Creates the config dir (claude creates the rest on first run). */
export async function ensureClaudeConfigDir(configDir: string): Promise<void> {
  try {
    await fs.mkdir(configDir, { recursive: true });
  } catch (error) {
    throw new AgentHarnessError(
      'ENGINE_CONFIG_INJECTION_FAILED',
      `Could not create ${configDir}: ${(error as Error).message}`,
      { cause: error, details: { config_path: configDir } },
    );
  }
}

/** Marks `dir` as trusted in `statePath` (`projects[dir].hasTrustDialogAccepted = true`). */
export async function registerClaudeTrust(statePath: string, dir: string): Promise<void> {
  await editJson(statePath, (doc) => {
    const projects = isObject(doc.projects) ? doc.projects : (doc.projects = {});
    const entry = isObject(projects[dir]) ? projects[dir] : (projects[dir] = {});
    entry[CLAUDE_TRUST_KEY] = true;
  });
}

/** Removes the trust key of `dir` (and the entry when nothing else is left in it); other state stays. */
export async function removeClaudeTrust(statePath: string, dir: string): Promise<void> {
  await editJson(statePath, (doc) => {
    if (!isObject(doc.projects)) return;
    const entry = doc.projects[dir];
    if (!isObject(entry)) return;
    delete entry[CLAUDE_TRUST_KEY];
    if (Object.keys(entry).length === 0) delete doc.projects[dir];
  });
}

/** True when `dir` is currently marked trusted in `statePath`. */
export async function isClaudeTrusted(statePath: string, dir: string): Promise<boolean> {
  const doc = await readJson(statePath);
  const entry = isObject(doc.projects) ? doc.projects[dir] : undefined;
  return isObject(entry) && entry[CLAUDE_TRUST_KEY] === true;
}

/**
 * Marks claude's first-run onboarding done in `statePath` (`hasCompletedOnboarding`), and approves `apiKey` (claude
 * keeps the last 20 characters of an approved key in `customApiKeyResponses.approved`) when given. Without them the
 * interactive claude 2.1.197 opens its onboarding, whose first step checks api.anthropic.com and exits offline
 * ("Unable to connect to Anthropic services"), and asks whether to use the key found in the environment; `-p` runs
 * skip both. Both are state of the managed home, kept across attempts (nothing of the run dir is in them).
 */
export async function acceptClaudeOnboarding(statePath: string, apiKey: string | null): Promise<void> {
  await editJson(statePath, (doc) => {
    doc.hasCompletedOnboarding = true;
    if (apiKey === null) return;
    const responses = isObject(doc.customApiKeyResponses)
      ? doc.customApiKeyResponses
      : (doc.customApiKeyResponses = {});
    const approved = Array.isArray(responses.approved) ? responses.approved : (responses.approved = []);
    const tail = apiKey.slice(-20);
    if (!approved.includes(tail)) approved.push(tail);
    if (!Array.isArray(responses.rejected)) responses.rejected = [];
  });
}
