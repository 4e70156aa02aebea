/**
 * The run store: run directories under the run root, their 8-hex handles, and the run index.
 *
 * The truth about a run is its own `.audit/run.json`; `<run_root>/index.jsonl` (run-index-log.ts) is a cache of
 * every run.json, appended to under a lock, and rebuilt from the run directories when it is missing or damaged.
 * So a crash mid-write never loses a run. A legacy `index.json` is migrated, its order kept.
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { AgentHarnessError } from '../errors/index.js';
import type { EngineId, ModelMode, RunIndexEntry, TranslateMode } from '../protocol/index.js';
import { syncFile, writeFileAtomicSync } from './atomic-write.js';
import { parseRunEntry } from './check-run-entry.js';
import { MAX_AUDIT_FILE_BYTES, readInputBytesSync } from './bounded-input.js';
import { withFileLock } from './file-lock.js';
import {
  appendIndexLog,
  indexLogPath,
  readIndexLog,
  readLegacyIndex,
  rewriteIndexLog,
  viewOfRuns,
  type RunIndexView,
} from './run-index-log.js';
import { AUDIT_DIR, RUN_RECORD_FILE, readRunRecord, runRecordPath, scanRunDirs, type BrokenRun } from './run-record.js';

export { AUDIT_DIR, RUN_RECORD_FILE, readRunRecord, type BrokenRun } from './run-record.js';

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
  return date
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d+Z$/, '');
}

function isUnder(runRoot: string, dir: string): boolean {
  return path.dirname(path.resolve(dir)) === path.resolve(runRoot);
}

/**
 * The runs as their run directories say (the slow, authoritative path): every child of the run root, plus the runs
 * the index knows elsewhere (a provider's `cwd`). Runs the index knew keep their order; new ones come after.
 */
async function scanRunStore(
  runRoot: string,
  known: readonly RunIndexEntry[],
): Promise<{ runs: RunIndexEntry[]; broken: BrokenRun[] }> {
  const scanned = await scanRunDirs(
    runRoot,
    known.filter((run) => !isUnder(runRoot, run.run_dir)).map((run) => run.run_dir),
  );
  const byId = new Map(scanned.runs.map((run) => [run.run_id, run]));
  const ordered = known.map((run) => byId.get(run.run_id)).filter((run): run is RunIndexEntry => run !== undefined);
  const kept = new Set(ordered.map((run) => run.run_id));
  return { runs: [...ordered, ...scanned.runs.filter((run) => !kept.has(run.run_id))], broken: scanned.broken };
}

/**
 * The index as found: the log's view; or, when the log is missing or damaged, the runs to rebuild it from (`trusted`:
 * a legacy index.json's, taken as they are; otherwise the runs a damaged log's valid lines name, to rescan with) and
 * whether the file needs rewriting even when the runs turn out unchanged (`repair`: a damaged log, a legacy index).
 */
type FoundIndex = { view: RunIndexView } | { known: RunIndexEntry[]; trusted: boolean; repair: boolean };

function findIndex(runRoot: string): FoundIndex {
  const read = readIndexLog(runRoot);
  if (read.ok) return { view: read.view };
  if (!read.missing) return { known: read.known, trusted: false, repair: true };
  const legacy = readLegacyIndex(runRoot);
  if (legacy === null) return { known: [], trusted: false, repair: false };
  return legacy === 'unreadable'
    ? { known: [], trusted: false, repair: true }
    : { known: legacy, trusted: true, repair: true };
}

/**
 * The index, rebuilt when the log is missing or damaged. `locked` (the caller holds the index lock): a rebuilt index
 * is written, and the view returned is the one {@link appendIndexLog} appends to.
 */
async function loadIndex(runRoot: string, locked: boolean): Promise<RunIndexView> {
  const found = findIndex(runRoot);
  if ('view' in found) return found.view;
  const runs = found.trusted ? found.known : (await scanRunStore(runRoot, found.known)).runs;
  return locked ? rewriteIndexLog(runRoot, runs) : viewOfRuns(runs);
}

/** What {@link refreshRunIndex} found: the runs, the unusable directories, and whether the index could be saved. */
export interface RunStoreScan {
  runs: RunIndexEntry[];
  broken: BrokenRun[];
  /**
   * Set when the run root cannot be written (read-only, full, no permission): the index was built in memory from
   * the run directories and not saved. Says why, for one warning.
   */
  unsaved?: string;
}

/** Options of {@link refreshRunIndex} and {@link resolveRunSelector}. */
export interface RunStoreReadOptions {
  /** Called once when the index could not be saved (see {@link RunStoreScan.unsaved}). */
  onUnsaved?: (message: string) => void;
}

/** errnos of a run root that cannot be written: reading it still works. */
const UNWRITABLE_ERRNOS = new Set(['EROFS', 'EACCES', 'EPERM', 'ENOSPC', 'EDQUOT']);

/** The errno (EROFS, EACCES, EPERM, ENOSPC, EDQUOT) when `error` or one of its causes says a write was refused, else null. */
export function unwritableErrno(error: unknown): string | null {
  for (let current = error, depth = 0; current && depth < 5; depth += 1) {
    const code = (current as NodeJS.ErrnoException).code;
    if (typeof code === 'string' && UNWRITABLE_ERRNOS.has(code)) return code;
    current = (current as { cause?: unknown }).cause;
  }
  return null;
}

/**
 * Rescans the run directories and rewrites the index from them, under the index lock: what `runs` shows and what a
 * selector the index missed falls back to. Returns the runs and the directories whose run.json cannot be used.
 * On a run root that cannot be written (read-only, full) it does the same without the lock and keeps the index in
 * memory: reading runs needs no write, so `runs` and `translate` work there; `unsaved` says why and `onUnsaved`
 * hears it once.
 */
export async function refreshRunIndex(runRoot: string, options: RunStoreReadOptions = {}): Promise<RunStoreScan> {
  if (!fs.existsSync(runRoot)) return { runs: [], broken: [] };
  try {
    return await withFileLock(indexLogPath(runRoot), async () => {
      const found = findIndex(runRoot);
      const known = 'view' in found ? [...found.view.runs.values()] : found.known;
      const scanned = await scanRunStore(runRoot, known);
      if (('repair' in found && found.repair) || JSON.stringify(scanned.runs) !== JSON.stringify(known))
        await rewriteIndexLog(runRoot, scanned.runs);
      return scanned;
    });
  } catch (error) {
    const errno = unwritableErrno(error);
    if (!errno) throw error;
    const found = findIndex(runRoot);
    const scanned = await scanRunStore(runRoot, 'view' in found ? [...found.view.runs.values()] : found.known);
    const unsaved = `The run root ${runRoot} cannot be written (${errno}): the run index was built in memory from the run directories and not saved.`;
    options.onUnsaved?.(unsaved);
    return { ...scanned, unsaved };
  }
}

/** Every run, oldest first. */
export async function listRuns(runRoot: string): Promise<RunIndexEntry[]> {
  return [...(await loadIndex(runRoot, false)).runs.values()];
}

/**
 * Writes a run's record under the index lock, atomically, with synchronous calls (an await would hold the lock across
 * turns of the event loop while the process's other attempts queue for it), and without an fsync: the caller makes it
 * durable with {@link syncRunRecord} once the lock is given back. Fsynced under the lock, 16 attempts starting in one
 * process each waited for the disk in turn (~200 ms an attempt on a 2-CPU VM); out of it, their fsyncs run side by
 * side in the thread pool and share the filesystem's journal commits.
 */
function writeRunRecord(entry: RunIndexEntry): void {
  writeFileAtomicSync(runRecordPath(entry.run_dir), `${JSON.stringify(entry, null, 2)}\n`);
}

/** Makes the record `entry` was written to durable (after the lock; see {@link writeRunRecord}); returns `entry`. */
async function syncRunRecord(entry: RunIndexEntry): Promise<RunIndexEntry> {
  await syncFile(runRecordPath(entry.run_dir));
  return entry;
}

/**
 * Creates a run directory with a fresh unique handle and registers it in the index. While the index log is whole
 * (every call but the first in a new run root), the lock is held by synchronous calls only: 16 attempts starting in
 * one process wait for each other ~1 ms each, not a turn of a busy event loop per file operation.
 */
export async function createRun(runRoot: string, options: CreateRunOptions): Promise<RunIndexEntry> {
  // withFileLock creates the run root; nothing is awaited before it, so calls of this process run in call order.
  const now = options.now ?? new Date();
  const created = await withFileLock(indexLogPath(runRoot), async () => {
    const index = await loadIndex(runRoot, true);
    for (let tries = 0; tries < 100; tries += 1) {
      const handle = randomBytes(4).toString('hex');
      if (index.handles.has(handle)) continue;
      const runId = `${formatRunTimestamp(now)}-${options.engine}-${handle}`;
      const runDir = options.runDir ? path.resolve(options.runDir) : path.join(runRoot, runId);
      if (options.runDir) {
        if (fs.existsSync(runRecordPath(runDir))) {
          throw new AgentHarnessError(
            'USAGE_ERROR',
            `${runDir} already holds a run (${path.join(AUDIT_DIR, RUN_RECORD_FILE)}); resume it by its handle instead of starting another in it.`,
          );
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
      writeRunRecord(entry);
      await appendIndexLog(runRoot, index, entry);
      return entry;
    }
    throw new AgentHarnessError('INTERNAL_ERROR', `Could not allocate a unique run handle under ${runRoot}.`);
  });
  return syncRunRecord(created);
}

/** What {@link updateRun} may change. The attempt count is not among them: it is derived from the run directory. */
export type RunPatch = Partial<
  Pick<
    RunIndexEntry,
    'session_id' | 'last_completion' | 'script' | 'translate_mode' | 'model_mode' | 'start_args' | 'prompt' | 'label'
  >
>;

/** Attempt numbers whose `meta.N.json` exists in the run directory, ascending. */
export function attemptNumbers(runDir: string): number[] {
  let names: string[];
  try {
    names = fs.readdirSync(path.join(runDir, AUDIT_DIR));
  } catch {
    return [];
  }
  return names
    .map((name) => /^meta\.(\d+)\.json$/.exec(name)?.[1])
    .filter((n): n is string => n !== undefined)
    .map(Number)
    .sort((a, b) => a - b);
}

/** True when an attempt after `attempt` has already finished (its meta says so): its outcome is the run's latest. */
function laterAttemptFinished(runDir: string, attempt: number): boolean {
  return attemptNumbers(runDir)
    .filter((n) => n > attempt)
    .some((n) => {
      try {
        // Read as an input: a FIFO left in the run directory in place of a meta is not waited on.
        const text = readInputBytesSync(path.join(runDir, AUDIT_DIR, `meta.${n}.json`), {
          what: 'attempt meta',
          maxBytes: MAX_AUDIT_FILE_BYTES,
        }).toString('utf8');
        return (JSON.parse(text) as { status?: unknown }).status === 'finished';
      } catch {
        return false;
      }
    });
}

/**
 * Applies `patch` to a run's record and its index entry under the index lock; returns the new entry. The attempt
 * count is always recomputed there from the `meta.N.json` files (the highest N): concurrent attempts of one run
 * each reserved their own N, so a count carried in the patch from before the attempt would be stale. When `attempt`
 * is given and a later attempt has already finished, the session id and last completion are left to that one.
 */
export async function updateRun(
  runRoot: string,
  runId: string,
  patch: RunPatch,
  attempt?: number,
): Promise<RunIndexEntry> {
  const updated = await withFileLock(indexLogPath(runRoot), async () => {
    const index = await loadIndex(runRoot, true);
    const cached = index.runs.get(runId);
    const current = readRunRecord(cached?.run_dir ?? path.join(runRoot, runId)) ?? cached;
    if (!current) throw new AgentHarnessError('RUN_NOT_FOUND', `No run "${runId}" under ${runRoot}.`);
    const superseded = attempt !== undefined && laterAttemptFinished(current.run_dir, attempt);
    const { session_id: sessionId, last_completion: lastCompletion, ...rest } = patch;
    const next = parseRunEntry({
      ...current,
      ...rest,
      ...(superseded
        ? {}
        : {
            ...(sessionId !== undefined ? { session_id: sessionId } : {}),
            ...(lastCompletion !== undefined ? { last_completion: lastCompletion } : {}),
          }),
      attempts: Math.max(0, ...attemptNumbers(current.run_dir)),
      updated_at: new Date().toISOString(),
    });
    writeRunRecord(next);
    await appendIndexLog(runRoot, index, next);
    return next;
  });
  return syncRunRecord(updated);
}

/** Matches a handle, run id or unique handle prefix among `runs`; undefined when none matches. */
function matchSelector(runs: readonly RunIndexEntry[], selector: string): RunIndexEntry | undefined {
  const needle = selector.toLowerCase();
  const exact = runs.find((run) => run.run_id === selector || run.handle === needle);
  if (exact) return exact;
  const matches = /^[0-9a-f]{4,7}$/.test(needle) ? runs.filter((run) => run.handle.startsWith(needle)) : [];
  if (matches.length > 1) {
    throw new AgentHarnessError(
      'RUN_SELECTOR_AMBIGUOUS',
      `Selector "${selector}" matches ${matches.length} runs: ${matches.map((run) => run.run_id).join(', ')}.`,
      {
        details: { selector, candidates: matches.map((run) => run.run_id) },
      },
    );
  }
  return matches[0];
}

/**
 * Finds a run by selector: a run directory path, a full run id, or a handle (a prefix of at least 4 hex
 * digits is accepted when it is unique). The index is only a cache: a hit is checked against the run's own
 * run.json, and a miss (a stale index that still parses) rescans the run directories and rebuilds the index.
 * Throws RUN_NOT_FOUND, RUN_SELECTOR_AMBIGUOUS, RUN_STORE_CORRUPT (the run.json is unreadable) or RUN_DIR_MOVED
 * (the directory's run.json records another directory: it was copied or moved).
 */
export async function resolveRunSelector(
  runRoot: string,
  selector: string,
  cwd: string = process.cwd(),
  options: RunStoreReadOptions = {},
): Promise<RunIndexEntry> {
  const trimmed = selector.trim();
  if (trimmed === '') throw new AgentHarnessError('RUN_NOT_FOUND', 'An empty run selector matches no run.');
  const looksLikePath = trimmed.includes('/') || trimmed.startsWith('.');
  if (looksLikePath) {
    const dir = path.resolve(cwd, trimmed);
    const record = readRunRecord(dir);
    if (record) return record;
    throw new AgentHarnessError(
      'RUN_NOT_FOUND',
      `${dir} is not a run directory (no ${AUDIT_DIR}/${RUN_RECORD_FILE}).`,
      { details: { selector } },
    );
  }
  const cached = matchSelector(await listRuns(runRoot), trimmed);
  const fresh = cached ? readRunRecord(cached.run_dir) : null;
  if (fresh && fresh.run_id === cached?.run_id) return fresh;
  const store = await refreshRunIndex(runRoot, options);
  const found = matchSelector(store.runs, trimmed);
  if (found) return found;
  // Not a run, but a broken one (its run.json unreadable, or the whole run root moved, or a copy): say so rather
  // than "not found". A broken run is known by the id its record names, else by its directory's name.
  const needle = trimmed.toLowerCase();
  const prefix = /^[0-9a-f]{4,7}$/.test(needle);
  const moved = store.broken.find(
    (dir) =>
      dir.run_id !== undefined &&
      (dir.run_id === trimmed ||
        dir.run_id.endsWith(`-${needle}`) ||
        (prefix && (dir.run_id.split('-').at(-1) ?? '').startsWith(needle))),
  );
  if (moved)
    throw new AgentHarnessError(moved.code, moved.message, {
      details: { selector, file: moved.file, run_dir: moved.run_dir },
    });
  throw new AgentHarnessError('RUN_NOT_FOUND', `No run matches "${selector}" under ${runRoot}.`, {
    details: { selector, run_root: runRoot },
  });
}

/**
 * Reserves the next attempt number of a run by creating `.audit/meta.N.json` exclusively, so two processes
 * resuming the same run never get the same number and an attempt is never overwritten. Synchronous calls (a mkdir,
 * a readdir, an exclusive open): trips through the thread pool would each wait for a turn of a busy event loop.
 */
export async function reserveAttempt(runDir: string): Promise<number> {
  const auditDir = path.join(runDir, AUDIT_DIR);
  fs.mkdirSync(auditDir, { recursive: true });
  let attempt = Math.max(0, ...attemptNumbers(runDir)) + 1;
  for (;;) {
    try {
      fs.closeSync(fs.openSync(path.join(auditDir, `meta.${attempt}.json`), 'wx'));
      return attempt;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      attempt += 1;
    }
  }
}

/** True for a run whose directory is directly under `runRoot`: the only runs {@link removeRuns} removes. */
export function isDirectlyUnder(runRoot: string, run: RunIndexEntry): boolean {
  return path.dirname(path.resolve(run.run_dir)) === path.resolve(runRoot);
}

/**
 * Removes run directories and their index entries, under the index lock. Only directories of this run root that
 * hold a run record are removed: a selector can never delete anything else.
 */
export async function removeRuns(runRoot: string, runIds: readonly string[]): Promise<RunIndexEntry[]> {
  if (runIds.length === 0) return [];
  return withFileLock(indexLogPath(runRoot), async () => {
    const runs = [...(await loadIndex(runRoot, true)).runs.values()];
    const doomed = runs.filter((run) => runIds.includes(run.run_id) && isDirectlyUnder(runRoot, run));
    for (const run of doomed) await fsp.rm(run.run_dir, { recursive: true, force: true });
    await rewriteIndexLog(
      runRoot,
      runs.filter((run) => !doomed.includes(run)),
    );
    return doomed;
  });
}
