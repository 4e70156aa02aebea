/**
 * A run's own record, `<run_dir>/.audit/run.json`, and the scan of a run root's directories. A run is identified by
 * its directory: a run.json that does not parse, fails its schema, or names another directory as its `run_dir` (the
 * directory was copied or moved) is never silently skipped or followed, it is reported as a {@link BrokenRun}.
 */
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { AgentHarnessError } from '../errors/index.js';
import { readInputBytesSync } from './bounded-input.js';
import type { RunIndexEntry } from '../protocol/index.js';
import { parseRunEntry } from './check-run-entry.js';
import { compareCodeUnits } from './code-unit-order.js';
import { createSlicer } from './slicer.js';

/** Name of the audit directory inside a run directory. */
export const AUDIT_DIR = '.audit';
/** The per-run record inside the audit directory. */
export const RUN_RECORD_FILE = 'run.json';

/** A run directory whose run.json cannot be used, and why (the error {@link readRunRecord} throws for it). */
export interface BrokenRun {
  /** The directory holding the record. */
  run_dir: string;
  /** The run.json itself. */
  file: string;
  /** `RUN_STORE_CORRUPT` (unreadable or invalid) or `RUN_DIR_MOVED` (it records another run directory). */
  code: 'RUN_STORE_CORRUPT' | 'RUN_DIR_MOVED';
  /** What is wrong, naming the file. */
  message: string;
  /**
   * The run id the record names when it could be read (a moved run's); for an unreadable record, the directory's
   * name when it has the form of a run id (`<timestamp>-<engine>-<handle>`), so a handle still finds it.
   */
  run_id?: string;
}

/** Largest run.json read (it holds the run's model script inline): 256 MiB. */
const MAX_RUN_RECORD_BYTES = 256 * 1024 * 1024;

/** The run.json of `runDir`. */
export function runRecordPath(runDir: string): string {
  return path.join(runDir, AUDIT_DIR, RUN_RECORD_FILE);
}

/** True when `a` and `b` name the same directory (literally, or once symlinks are resolved). */
function sameDir(a: string, b: string): boolean {
  if (path.resolve(a) === path.resolve(b)) return true;
  try {
    return fs.realpathSync(a) === fs.realpathSync(b);
  } catch {
    return false;
  }
}

/**
 * Reads a run directory's run.json, or null when it has none. Throws RUN_STORE_CORRUPT when the file does not
 * parse or fails the schema, and RUN_DIR_MOVED when it records another directory as the run's (a `cp -r` or `mv`
 * of a run directory): attempts added to the copy would otherwise update the original's record and index entry.
 *
 * Synchronous: a run.json is a few hundred bytes, which one synchronous read takes in less time than a trip through
 * libuv's thread pool (a scan of 5,000 runs awaited one read after another for ~1 s). It is read as an input
 * ({@link readInputBytesSync}): the run directory is the engine's working directory, and a FIFO or a device put
 * there in place of the record is reported, not read (a read would block the process for good).
 */
export function readRunRecord(runDir: string): RunIndexEntry | null {
  const file = runRecordPath(runDir);
  let text: string;
  try {
    text = readInputBytesSync(file, {
      what: 'run record',
      maxBytes: MAX_RUN_RECORD_BYTES,
      unreadableCode: 'RUN_STORE_CORRUPT',
    }).toString('utf8');
  } catch (error) {
    const code = ((error as { cause?: NodeJS.ErrnoException }).cause ?? (error as NodeJS.ErrnoException)).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return null;
    throw new AgentHarnessError('RUN_STORE_CORRUPT', `Run record ${file} cannot be read: ${(error as Error).message}`, {
      cause: error,
      details: { file, run_dir: runDir },
    });
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new AgentHarnessError(
      'RUN_STORE_CORRUPT',
      `Run record ${file} is not valid JSON: ${(error as Error).message}`,
      { cause: error, details: { file, run_dir: runDir } },
    );
  }
  // The schema's own error says what is wrong with a record it refuses.
  let record: RunIndexEntry;
  try {
    record = parseRunEntry(value);
  } catch (error) {
    throw new AgentHarnessError('RUN_STORE_CORRUPT', `Run record ${file} is invalid: ${(error as Error).message}`, {
      details: { file, run_dir: runDir },
    });
  }
  if (!sameDir(record.run_dir, runDir)) {
    throw new AgentHarnessError(
      'RUN_DIR_MOVED',
      `Run record ${file} belongs to run directory ${record.run_dir}, not ${path.resolve(runDir)}: this directory was copied or moved from there.`,
      {
        details: { file, run_dir: path.resolve(runDir), recorded_run_dir: record.run_dir, run_id: record.run_id },
      },
    );
  }
  return { ...record, run_dir: path.resolve(runDir) };
}

/** The form of a run id, which a run directory under the run root is named after (see createRun). */
const RUN_ID_FORM = /^\d{8}T\d{6}-[a-z0-9_-]+-[0-9a-f]{8}$/;

/** Reads one directory's record as a run, a broken run, or nothing (not a run directory). */
function inspectRunDir(runDir: string): { run: RunIndexEntry } | { broken: BrokenRun } | null {
  try {
    const run = readRunRecord(runDir);
    return run ? { run } : null;
  } catch (error) {
    if (error instanceof AgentHarnessError && (error.code === 'RUN_STORE_CORRUPT' || error.code === 'RUN_DIR_MOVED')) {
      const named = path.basename(path.resolve(runDir));
      const runId =
        typeof error.details?.run_id === 'string' ? error.details.run_id : RUN_ID_FORM.test(named) ? named : undefined;
      return {
        broken: {
          run_dir: path.resolve(runDir),
          file: runRecordPath(runDir),
          code: error.code,
          message: error.message,
          ...(runId ? { run_id: runId } : {}),
        },
      };
    }
    throw error;
  }
}

/**
 * Reads every run directory: the children of the run root, plus `extraDirs` (runs kept elsewhere, a provider's
 * `cwd`, known only from the index). Runs come out sorted by creation time, then run id.
 */
export async function scanRunDirs(
  runRoot: string,
  extraDirs: readonly string[] = [],
): Promise<{ runs: RunIndexEntry[]; broken: BrokenRun[] }> {
  const names = await fsp.readdir(runRoot).catch(() => [] as string[]);
  const dirs = [...names.sort().map((name) => path.join(runRoot, name)), ...extraDirs.map((dir) => path.resolve(dir))];
  const runs: RunIndexEntry[] = [];
  const broken: BrokenRun[] = [];
  const seen = new Set<string>();
  // Synchronous reads in slices (the event loop gets a turn every few ms).
  const slicer = createSlicer();
  for (const dir of dirs) {
    if (seen.has(dir)) continue;
    seen.add(dir);
    const found = inspectRunDir(dir);
    if (found && 'run' in found) runs.push(found.run);
    else if (found) broken.push(found.broken);
    if (slicer.due()) await slicer.pause();
  }
  runs.sort((a, b) => compareCodeUnits(a.created_at, b.created_at) || compareCodeUnits(a.run_id, b.run_id));
  return { runs, broken };
}
