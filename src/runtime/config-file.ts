/**
 * Read-modify-write of an engine's config file (JSON or TOML) under an inter-process lock, written
 * atomically: concurrent attempts never lose each other's keys, and a crash never leaves half a file.
 * Any failure is ENGINE_CONFIG_INJECTION_FAILED naming the file.
 */
import { assertAgentPathSafe } from './agent-writable.js';
import { parse as parseToml, stringify as stringifyToml } from 'smol-toml';
import { AgentHarnessError } from '../errors/index.js';
import { writeFileAtomic } from './atomic-write.js';
import { MAX_CONFIG_BYTES, readInputBytesSync } from './bounded-input.js';
import { withFileLock } from './file-lock.js';

/** A config document: a JSON object or a TOML table. */
export type ConfigDoc = Record<string, unknown>;

/** How a config file is parsed and written. */
export interface ConfigFormat {
  readonly name: string;
  parse(text: string): unknown;
  stringify(doc: ConfigDoc): string;
}

/** JSON, pretty-printed with a trailing newline. */
export const JSON_CONFIG: ConfigFormat = {
  name: 'JSON',
  parse: (text) => JSON.parse(text),
  stringify: (doc) => `${JSON.stringify(doc, null, 2)}\n`,
};

/** TOML (smol-toml). */
export const TOML_CONFIG: ConfigFormat = {
  name: 'TOML',
  parse: (text) => parseToml(text),
  stringify: (doc) => stringifyToml(doc),
};

function isTable(value: unknown): value is ConfigDoc {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Reads a config file; a missing file is an empty document. Read with synchronous calls (a config is a few KB, and
 * parsing it costs more than reading it): a read stream's trips through the thread pool each wait for a turn of the
 * event loop, which many attempts starting in one process keep busy.
 */
export async function readConfigFile(file: string, format: ConfigFormat): Promise<ConfigDoc> {
  assertAgentPathSafe(file);
  let text: string;
  try {
    text = readInputBytesSync(file, {
      what: 'config file',
      maxBytes: MAX_CONFIG_BYTES,
      unreadableCode: 'ENGINE_CONFIG_INJECTION_FAILED',
    }).toString('utf8');
  } catch (error) {
    if (((error as Error).cause as NodeJS.ErrnoException | undefined)?.code === 'ENOENT') return {};
    throw error;
  }
  let value: unknown;
  try {
    value = format.parse(text);
  } catch (error) {
    throw new AgentHarnessError(
      'ENGINE_CONFIG_INJECTION_FAILED',
      `${file} is not valid ${format.name}: ${(error as Error).message}`,
      { cause: error, details: { config_path: file } },
    );
  }
  if (!isTable(value))
    throw new AgentHarnessError('ENGINE_CONFIG_INJECTION_FAILED', `${file} does not hold a ${format.name} object.`, {
      details: { config_path: file },
    });
  return value;
}

/** Applies `edit` to `doc`; true when that changed it (compared as written). */
function applyEdit(doc: ConfigDoc, format: ConfigFormat, edit: (doc: ConfigDoc) => void): boolean {
  const before = format.stringify(doc);
  edit(doc);
  return format.stringify(doc) !== before;
}

/**
 * Applies `edit` to the file's document under its lock and writes it back atomically. An edit that changes
 * nothing (the base keys every attempt sets again) writes nothing and takes no lock: checked first on a plain
 * read, which is safe because every writer holds the lock and replaces the file whole, and the only edits that
 * remove keys remove another attempt's trust entry, never what this edit sets.
 */
export async function editConfigFile(
  file: string,
  format: ConfigFormat,
  edit: (doc: ConfigDoc) => void,
): Promise<void> {
  try {
    // A missing directory reads as an empty document; the lock and the write make it when there is something to write.
    if (!applyEdit(await readConfigFile(file, format), format, edit)) return;
    await withFileLock(file, async () => {
      const doc = await readConfigFile(file, format);
      if (applyEdit(doc, format, edit)) await writeFileAtomic(file, format.stringify(doc));
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

/** The sub-table `parent[key]`, created when missing or not a table. */
export function childTable(parent: ConfigDoc, key: string): ConfigDoc {
  const current = parent[key];
  if (isTable(current)) return current;
  const created: ConfigDoc = {};
  parent[key] = created;
  return created;
}

/**
 * Sets top-level `keys` of the JSON settings file `file` (under its lock) and returns how to put them back as they
 * were: the previous values, or no key where there was none.
 */
export async function setSettingsKeys(file: string, keys: Record<string, unknown>): Promise<() => Promise<void>> {
  const previous: Record<string, unknown> = {};
  await editConfigFile(file, JSON_CONFIG, (doc) => {
    for (const [key, value] of Object.entries(keys)) {
      previous[key] = doc[key];
      doc[key] = value as ConfigDoc[string];
    }
  });
  return () =>
    editConfigFile(file, JSON_CONFIG, (doc) => {
      for (const [key, value] of Object.entries(previous)) {
        if (value === undefined) delete doc[key];
        else doc[key] = value as ConfigDoc[string];
      }
    });
}
