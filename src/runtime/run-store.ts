/**
 * The run store: run directories under the run root, their 8-hex handles, and the run index.
 *
 * The truth about a run is its own `.audit/run.json`; `<run_root>/index.json` is a cache of every run.json,
 * updated under a lock and written atomically, and rebuilt from the run directories when it is missing or
 * unreadable. So a crash mid-write never loses a run.
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { AgentHarnessError } from '../errors/index.js';
import {
  RUN_INDEX_VERSION,
  RunIndexEntrySchema,
  RunIndexSchema,
  type EngineId,
  type ModelMode,
  type RunIndexEntry,
  type TranslateMode,
} from '../protocol/index.js';
import { writeJsonAtomic } from './atomic-write.js';
import { withFileLock } from './file-lock.js';

/** Name of the audit directory inside a run directory. */
export const AUDIT_DIR = '.audit';
/** The per-run record inside the audit directory. */
export const RUN_RECORD_FILE = 'run.json';
const INDEX_FILE = 'index.json';

/** Options of {@link createRun}. */
export interface CreateRunOptions {
  engine: EngineId;
  translateMode: TranslateMode;
  modelMode: ModelMode;
  script: RunIndexEntry['script'];
  /** The user-written engine argv of the first attempt (null for the default command). */
  startArgs?: readonly string[] | null;
  /** The prompt of the default command (null for a user-written argv). */
  prompt?: string | null;
  /** The test that started the run (its full name), or null. */
  label?: string | null;
  /**
   * Use this existing directory as the run directory (a provider's `cwd`) instead of a new one under the run root;
   * it must not already hold a run.
   */
  runDir?: string;
  /** Clock, for tests. */
  now?: Date;
}

/** `YYYYMMDDTHHMMSS` in UTC. */
export function formatRunTimestamp(date: Date): string {
  return date.toISOString().replace(/[-:]/g, '').replace(/\.\d+Z$/, '');
}

function indexPath(runRoot: string): string {
  return path.join(runRoot, INDEX_FILE);
}

/** Reads every run.json under the run root (the slow, authoritative path). */
async function scanRunRecords(runRoot: string): Promise<RunIndexEntry[]> {
  let names: string[];
  try {
    names = await fsp.readdir(runRoot);
  } catch {
    return [];
  }
  const entries: RunIndexEntry[] = [];
  for (const name of names.sort()) {
    const parsed = await readRunRecord(path.join(runRoot, name)).catch(() => null);
    if (parsed) entries.push(parsed);
  }
  return entries;
}

/** Reads a run directory's run.json, or null when it has none. */
export async function readRunRecord(runDir: string): Promise<RunIndexEntry | null> {
  let text: string;
  try {
    text = await fsp.readFile(path.join(runDir, AUDIT_DIR, RUN_RECORD_FILE), 'utf8');
  } catch {
    return null;
  }
  const result = RunIndexEntrySchema.safeParse(JSON.parse(text));
  if (!result.success) {
    throw new AgentHarnessError('RUN_STORE_CORRUPT', `Run record ${path.join(runDir, AUDIT_DIR, RUN_RECORD_FILE)} is invalid: ${result.error.message}`);
  }
  return result.data;
}

async function readIndexUnlocked(runRoot: string): Promise<RunIndexEntry[]> {
  try {
    const parsed = RunIndexSchema.safeParse(JSON.parse(await fsp.readFile(indexPath(runRoot), 'utf8')));
    if (parsed.success) return parsed.data.runs;
  } catch {
    // missing or unreadable: rebuilt below
  }
  return scanRunRecords(runRoot);
}

async function writeIndexUnlocked(runRoot: string, runs: RunIndexEntry[]): Promise<void> {
  await writeJsonAtomic(indexPath(runRoot), { version: RUN_INDEX_VERSION, runs });
}

/** Every run, oldest first. */
export async function listRuns(runRoot: string): Promise<RunIndexEntry[]> {
  return readIndexUnlocked(runRoot);
}

/** Creates a run directory with a fresh unique handle and registers it in the index. */
export async function createRun(runRoot: string, options: CreateRunOptions): Promise<RunIndexEntry> {
  await fsp.mkdir(runRoot, { recursive: true });
  const now = options.now ?? new Date();
  return withFileLock(indexPath(runRoot), async () => {
    const runs = await readIndexUnlocked(runRoot);
    const taken = new Set(runs.map((run) => run.handle));
    for (let tries = 0; tries < 100; tries += 1) {
      const handle = randomBytes(4).toString('hex');
      if (taken.has(handle)) continue;
      const runId = `${formatRunTimestamp(now)}-${options.engine}-${handle}`;
      const runDir = options.runDir ? path.resolve(options.runDir) : path.join(runRoot, runId);
      if (options.runDir) {
        if (fs.existsSync(path.join(runDir, AUDIT_DIR, RUN_RECORD_FILE))) {
          throw new AgentHarnessError('USAGE_ERROR', `${runDir} already holds a run (${path.join(AUDIT_DIR, RUN_RECORD_FILE)}); resume it by its handle instead of starting another in it.`);
        }
        fs.mkdirSync(runDir, { recursive: true });
      } else {
        try {
          fs.mkdirSync(runDir);
        } catch {
          continue;
        }
      }
      const stamp = now.toISOString();
      const entry: RunIndexEntry = {
        run_id: runId,
        handle,
        engine: options.engine,
        run_dir: runDir,
        created_at: stamp,
        updated_at: stamp,
        attempts: 0,
        session_id: null,
        translate_mode: options.translateMode,
        model_mode: options.modelMode,
        script: options.script,
        last_completion: null,
        start_args: options.startArgs ? [...options.startArgs] : null,
        prompt: options.prompt ?? null,
        label: options.label ?? null,
      };
      await writeJsonAtomic(path.join(runDir, AUDIT_DIR, RUN_RECORD_FILE), entry);
      await writeIndexUnlocked(runRoot, [...runs, entry]);
      return entry;
    }
    throw new AgentHarnessError('INTERNAL_ERROR', `Could not allocate a unique run handle under ${runRoot}.`);
  });
}

/** Applies `patch` to a run's record and its index entry; returns the new entry. */
export async function updateRun(
  runRoot: string,
  runId: string,
  patch: Partial<Omit<RunIndexEntry, 'run_id' | 'handle' | 'run_dir' | 'engine' | 'created_at'>>,
): Promise<RunIndexEntry> {
  return withFileLock(indexPath(runRoot), async () => {
    const runs = await readIndexUnlocked(runRoot);
    const index = runs.findIndex((run) => run.run_id === runId);
    const current = index >= 0 ? runs[index] : await readRunRecord(path.join(runRoot, runId));
    if (!current) throw new AgentHarnessError('RUN_NOT_FOUND', `No run "${runId}" under ${runRoot}.`);
    const next = RunIndexEntrySchema.parse({ ...current, ...patch, updated_at: new Date().toISOString() });
    await writeJsonAtomic(path.join(next.run_dir, AUDIT_DIR, RUN_RECORD_FILE), next);
    if (index >= 0) runs[index] = next;
    else runs.push(next);
    await writeIndexUnlocked(runRoot, runs);
    return next;
  });
}

/**
 * Finds a run by selector: a run directory path, a full run id, or a handle (a prefix of at least 4 hex
 * digits is accepted when it is unique). Throws RUN_NOT_FOUND or RUN_SELECTOR_AMBIGUOUS.
 */
export async function resolveRunSelector(runRoot: string, selector: string, cwd: string = process.cwd()): Promise<RunIndexEntry> {
  const trimmed = selector.trim();
  if (trimmed === '') throw new AgentHarnessError('RUN_NOT_FOUND', 'An empty run selector matches no run.');
  const looksLikePath = trimmed.includes('/') || trimmed.startsWith('.');
  if (looksLikePath) {
    const dir = path.resolve(cwd, trimmed);
    const record = await readRunRecord(dir);
    if (record) return { ...record, run_dir: dir };
    throw new AgentHarnessError('RUN_NOT_FOUND', `${dir} is not a run directory (no ${AUDIT_DIR}/${RUN_RECORD_FILE}).`, { details: { selector } });
  }
  const runs = await listRuns(runRoot);
  const exact = runs.find((run) => run.run_id === trimmed || run.handle === trimmed.toLowerCase());
  if (exact) return exact;
  const needle = trimmed.toLowerCase();
  const matches = /^[0-9a-f]{4,7}$/.test(needle) ? runs.filter((run) => run.handle.startsWith(needle)) : [];
  if (matches.length === 1 && matches[0]) return matches[0];
  if (matches.length > 1) {
    throw new AgentHarnessError('RUN_SELECTOR_AMBIGUOUS', `Selector "${selector}" matches ${matches.length} runs: ${matches.map((run) => run.run_id).join(', ')}.`, {
      details: { selector, candidates: matches.map((run) => run.run_id) },
    });
  }
  throw new AgentHarnessError('RUN_NOT_FOUND', `No run matches "${selector}" under ${runRoot}.`, { details: { selector, run_root: runRoot } });
}

/**
 * Reserves the next attempt number of a run by creating `.audit/meta.N.json` exclusively, so two processes
 * resuming the same run never get the same number and an attempt is never overwritten.
 */
export async function reserveAttempt(runDir: string): Promise<number> {
  const auditDir = path.join(runDir, AUDIT_DIR);
  await fsp.mkdir(auditDir, { recursive: true });
  const existing = (await fsp.readdir(auditDir))
    .map((name) => /^meta\.(\d+)\.json$/.exec(name)?.[1])
    .filter((n): n is string => n !== undefined)
    .map(Number);
  let attempt = existing.length === 0 ? 1 : Math.max(...existing) + 1;
  for (;;) {
    try {
      const handle = await fsp.open(path.join(auditDir, `meta.${attempt}.json`), 'wx');
      await handle.close();
      return attempt;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      attempt += 1;
    }
  }
}

/**
 * Removes run directories and their index entries, under the index lock. Only directories of this run root that
 * hold a run record are removed: a selector can never delete anything else.
 */
export async function removeRuns(runRoot: string, runIds: readonly string[]): Promise<RunIndexEntry[]> {
  if (runIds.length === 0) return [];
  return withFileLock(indexPath(runRoot), async () => {
    const runs = await readIndexUnlocked(runRoot);
    const doomed = runs.filter((run) => runIds.includes(run.run_id) && path.dirname(path.resolve(run.run_dir)) === path.resolve(runRoot));
    for (const run of doomed) await fsp.rm(run.run_dir, { recursive: true, force: true });
    await writeIndexUnlocked(runRoot, runs.filter((run) => !doomed.includes(run)));
    return doomed;
  });
}
