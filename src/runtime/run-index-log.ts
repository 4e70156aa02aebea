/**
 * The run index log, `<run_root>/index.jsonl` (format: `protocol/run-index.ts`): read folded, appended one run's
 * line at a time, rewritten whole (compaction, rebuild, migration of the legacy `index.json`).
 *
 * A process keeps the folded view of each log it has read, with the file's identity (dev, ino and header line, whose
 * generation is new at every rewrite) and the byte offset it has read up to, so the next read only reads what was
 * appended since, and validates each line once: an attempt's index work does not grow with the number of runs.
 * Writers hold the index lock (run-store.ts); readers need not: a rewrite is a rename, and a line counts only once
 * its newline is there (the file grows in order), so an unterminated last line (a crash mid-append, or an append
 * still being written) is never read; the next writer cuts off a crashed one's. A complete line that is not a valid
 * entry makes the log damaged: the caller rebuilds it from the run directories.
 *
 * The lines are checked by hand (`check-run-entry.ts`, the header and the legacy index here), not by the zod schemas
 * of `protocol/run-index.ts`: every start reads this log, and zod is kept off that path (issue 44).
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { checkRunEntry } from './check-run-entry.js';
import type { RunIndexEntry } from '../protocol/run-index.js';
import { RUN_INDEX_LOG_VERSION, RUN_INDEX_VERSION } from '../protocol/versions.js';
import { writeFileAtomic } from './atomic-write.js';

/** The index log in the run root. */
export const INDEX_LOG_FILE = 'index.jsonl';
/** The index before the log (pretty JSON), read once to migrate it and removed at the log's next rewrite. */
export const LEGACY_INDEX_FILE = 'index.json';
/** The slack of {@link maxIndexLines}: a small log is never compacted for a few updates. */
const COMPACT_SLACK = 64;

/**
 * The most entry lines the log of `runs` runs may hold: a write that would leave more rewrites it with one line per
 * run instead of appending. Every fresh process parses each line (the schema check), so the bound is kept near the
 * run count: one and a half lines per run, not two (a start appends two lines, created and finished, so a bound of
 * two lines per run was never reached). At least `runs / 2 + COMPACT_SLACK` appends lie between two compactions, so
 * their O(runs) cost is O(1) per append.
 */
export function maxIndexLines(runs: number): number {
  return Math.floor((3 * runs) / 2) + COMPACT_SLACK;
}

const NEWLINE = 0x0a;

/** A folded index: every run once, in the order of its first line, as of its last line. */
export interface RunIndexView {
  /** Runs by run id, oldest first. */
  readonly runs: ReadonlyMap<string, RunIndexEntry>;
  /** The handles of {@link RunIndexView.runs}. */
  readonly handles: ReadonlySet<string>;
  /** Entry lines the file holds (at least one per run): what decides a compaction. */
  readonly lines: number;
}

/** A view being built. */
interface FoldedRuns extends RunIndexView {
  readonly runs: Map<string, RunIndexEntry>;
  readonly handles: Set<string>;
  lines: number;
}

/** What this process remembers of a log file it has read. */
interface LogState extends FoldedRuns {
  readonly dev: number;
  readonly ino: number;
  /** The header line, newline included. */
  readonly header: Buffer;
  /** Bytes read and folded: the end of the last complete line. */
  offset: number;
}

/** By log path. */
const states = new Map<string, LogState>();

/** What {@link readIndexLog} found. */
export type IndexLogRead =
  | { ok: true; view: RunIndexView }
  /** `missing`: no log file. Otherwise damaged: `known` are the runs its valid lines name, folded, for the rescan. */
  | { ok: false; missing: boolean; known: RunIndexEntry[] };

/** `<run_root>/index.jsonl`. */
export function indexLogPath(runRoot: string): string {
  return path.join(runRoot, INDEX_LOG_FILE);
}

function legacyIndexPath(runRoot: string): string {
  return path.join(runRoot, LEGACY_INDEX_FILE);
}

function fold(view: FoldedRuns, entries: readonly RunIndexEntry[]): FoldedRuns {
  for (const entry of entries) {
    view.runs.set(entry.run_id, entry);
    view.handles.add(entry.handle);
    view.lines += 1;
  }
  return view;
}

function foldRuns(runs: Iterable<RunIndexEntry>): FoldedRuns {
  return fold({ runs: new Map(), handles: new Set(), lines: 0 }, [...runs]);
}

/** An unremembered view of `runs` (a rebuilt index not written, a legacy one). */
export function viewOfRuns(runs: Iterable<RunIndexEntry>): RunIndexView {
  return foldRuns(runs);
}

/**
 * The entries of the complete lines of `bytes` and how many bytes they span (an unterminated last line is left
 * unread); `valid` is false when a complete line is not a valid entry.
 */
function parseLines(bytes: Buffer): { entries: RunIndexEntry[]; consumed: number; valid: boolean } {
  const consumed = bytes.lastIndexOf(NEWLINE) + 1;
  const entries: RunIndexEntry[] = [];
  let valid = true;
  for (const line of bytes.toString('utf8', 0, consumed).split('\n')) {
    if (line.trim() === '') continue;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      valid = false;
      continue;
    }
    const entry = checkRunEntry(value);
    if (entry) entries.push(entry);
    else valid = false;
  }
  return { entries, consumed, valid };
}

/** `length` bytes at `position` of the open file `fd` (fewer at the end of the file). */
function readAt(fd: number, position: number, length: number): Buffer {
  const buffer = Buffer.alloc(length);
  let filled = 0;
  while (filled < length) {
    const bytesRead = fs.readSync(fd, buffer, filled, length - filled, position + filled);
    if (bytesRead === 0) break;
    filled += bytesRead;
  }
  return buffer.subarray(0, filled);
}

/** Reads what was appended after `state.offset`, or null when the file is not the one `state` remembers. */
function readAppended(
  fd: number,
  state: LogState,
): { entries: RunIndexEntry[]; consumed: number; valid: boolean } | null {
  const stat = fs.fstatSync(fd);
  if (stat.dev !== state.dev || stat.ino !== state.ino || stat.size < state.offset) return null;
  if (!readAt(fd, 0, state.header.length).equals(state.header)) return null;
  // From the byte before: it must end a line, or the file was rewritten in place.
  const tail = readAt(fd, state.offset - 1, stat.size - state.offset + 1);
  if (tail[0] !== NEWLINE) return null;
  return parseLines(tail.subarray(1));
}

/** Whether `value` is a header line `RunIndexLogHeaderSchema` accepts (unknown keys are ignored, as there). */
function isLogHeader(value: unknown): boolean {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const { version, generation } = value as Record<string, unknown>;
  return version === RUN_INDEX_LOG_VERSION && typeof generation === 'string' && generation.length >= 1;
}

/** Reads the whole file: its header and every complete line. */
function readWhole(fd: number): { state: LogState | null; known: RunIndexEntry[] } {
  const stat = fs.fstatSync(fd);
  const bytes = readAt(fd, 0, stat.size);
  const headerEnd = bytes.indexOf(NEWLINE) + 1;
  const lines = parseLines(bytes.subarray(headerEnd));
  const view = foldRuns(lines.entries);
  let header = false;
  try {
    header = headerEnd > 0 && isLogHeader(JSON.parse(bytes.toString('utf8', 0, headerEnd)));
  } catch {
    // not JSON: damaged
  }
  if (!header || !lines.valid) return { state: null, known: [...view.runs.values()] };
  return {
    state: {
      ...view,
      dev: stat.dev,
      ino: stat.ino,
      header: bytes.subarray(0, headerEnd),
      offset: headerEnd + lines.consumed,
    },
    known: [],
  };
}

/**
 * Reads the index log of `runRoot`, folded: from this process's memory plus what was appended since, or the whole
 * file when it was rewritten or never read here. Never throws for what the file holds: a missing, foreign or damaged
 * log is reported as such, with the runs its valid lines name. Synchronous: an attempt reads a few appended lines,
 * and a trip through the thread pool per call would wait for the event loop's turns under the index lock.
 */
export function readIndexLog(runRoot: string): IndexLogRead {
  const file = indexLogPath(runRoot);
  const before = states.get(file);
  let fd: number;
  try {
    fd = fs.openSync(file, 'r');
  } catch (error) {
    return { ok: false, missing: (error as NodeJS.ErrnoException).code === 'ENOENT', known: [] };
  }
  try {
    if (before) {
      const appended = readAppended(fd, before);
      if (appended && !appended.valid) {
        states.delete(file);
        return {
          ok: false,
          missing: false,
          known: [...fold(foldRuns(before.runs.values()), appended.entries).runs.values()],
        };
      }
      if (appended) {
        fold(before, appended.entries);
        before.offset += appended.consumed;
        return { ok: true, view: before };
      }
    }
    const whole = readWhole(fd);
    if (!whole.state) {
      states.delete(file);
      return { ok: false, missing: false, known: whole.known };
    }
    states.set(file, whole.state);
    return { ok: true, view: whole.state };
  } catch {
    return { ok: false, missing: false, known: [] };
  } finally {
    try {
      fs.closeSync(fd);
    } catch {
      // closed already: nothing to give back
    }
  }
}

/**
 * Rewrites the index log with one line per run under a new header (atomically, without an fsync: it is a cache),
 * removes a legacy `index.json`, and remembers the result. Call it holding the index lock.
 */
export async function rewriteIndexLog(runRoot: string, runs: Iterable<RunIndexEntry>): Promise<RunIndexView> {
  const file = indexLogPath(runRoot);
  const list = [...runs];
  const header = Buffer.from(
    `${JSON.stringify({ version: RUN_INDEX_LOG_VERSION, generation: randomBytes(8).toString('hex') })}\n`,
  );
  const body = Buffer.from(list.map((run) => `${JSON.stringify(run)}\n`).join(''));
  states.delete(file);
  await writeFileAtomic(file, Buffer.concat([header, body]), { durable: false });
  fs.rmSync(legacyIndexPath(runRoot), { force: true });
  const stat = fs.statSync(file);
  const state: LogState = {
    ...foldRuns(list),
    dev: stat.dev,
    ino: stat.ino,
    header,
    offset: header.length + body.length,
  };
  states.set(file, state);
  return state;
}

/**
 * Records `entry` (a new run, or a run's latest state) in the index log: one appended line, or a compaction when
 * the log would hold too many lines for its runs. `view` is what {@link readIndexLog} or {@link rewriteIndexLog}
 * returned under the index lock, which the caller still holds. The append is synchronous (open, stat, write,
 * close: no turn of the event loop while the lock is held); a compaction is a {@link rewriteIndexLog}.
 */
export async function appendIndexLog(runRoot: string, view: RunIndexView, entry: RunIndexEntry): Promise<void> {
  const file = indexLogPath(runRoot);
  const state = states.get(file);
  const runs = view.runs.size + (view.runs.has(entry.run_id) ? 0 : 1);
  const rewrite = (): Promise<RunIndexView> =>
    rewriteIndexLog(runRoot, new Map([...view.runs, [entry.run_id, entry]]).values());
  // Not the file read under this lock (changed behind the lock's back), or time to compact.
  if (state !== view || view.lines + 1 > maxIndexLines(runs)) {
    await rewrite();
    return;
  }
  const offset = state.offset;
  const line = Buffer.from(`${JSON.stringify(entry)}\n`);
  const fd = fs.openSync(file, 'a');
  let appended = false;
  try {
    const stat = fs.fstatSync(fd);
    if (stat.dev === state.dev && stat.ino === state.ino && stat.size >= offset) {
      // Bytes past the last complete line are the unterminated line of a writer that crashed (writers hold the lock).
      if (stat.size > offset) fs.ftruncateSync(fd, offset);
      fs.writeFileSync(fd, line);
      appended = true;
    }
  } finally {
    fs.closeSync(fd);
  }
  if (!appended) {
    await rewrite();
    return;
  }
  fold(state, [entry]);
  state.offset += line.length;
}

/**
 * The runs of a legacy `<run_root>/index.json` in its order: `null` when there is none, `'unreadable'` when it does
 * not parse or fails its schema.
 */
export function readLegacyIndex(runRoot: string): RunIndexEntry[] | 'unreadable' | null {
  let text: string;
  try {
    text = fs.readFileSync(legacyIndexPath(runRoot), 'utf8');
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ENOENT' ? null : 'unreadable';
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return 'unreadable';
  }
  // `RunIndexSchema`: the version tag and a list of entries, each of which must pass.
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return 'unreadable';
  const { version, runs } = value as Record<string, unknown>;
  if (version !== RUN_INDEX_VERSION || !Array.isArray(runs)) return 'unreadable';
  const entries = runs.map(checkRunEntry);
  return entries.every((entry) => entry !== undefined) ? entries : 'unreadable';
}
