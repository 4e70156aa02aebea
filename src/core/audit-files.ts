/**
 * The audit files of one attempt (`<run_dir>/.audit/*.N.*`) and a writer that appends raw output as it
 * arrives with synchronous writes, so whatever the engine printed is on disk even if the harness dies.
 */
import fs from 'node:fs';
import { AgentHarnessError } from '../errors/index.js';
import { writeJsonAtomic } from '../runtime/atomic-write.js';
import { openInputFile, type CheckedInputFile } from '../runtime/bounded-input.js';
import { openOwnFile } from '../runtime/own-file.js';
import path from 'node:path';
import type { StreamName } from '../protocol/index.js';
import { AUDIT_DIR } from '../runtime/run-store.js';

/** Absolute paths of every audit file of an attempt. */
export interface AttemptAuditPaths {
  dir: string;
  meta: string;
  stdin: string;
  stdout: string;
  stderr: string;
  ptyOutput: string;
  ptyTiming: string;
  fsBefore: string;
  fsAfter: string;
  fsDiff: string;
  rasp: string;
  fcmp: string;
  conformance: string;
  /** Every request the engine made to the scripted model during the attempt (empty when it made none). */
  modelRequests: string;
  /**
   * Over transport `acp`: every message the harness sent the engine (its stdin), as written (JSON-RPC lines). The
   * engine's side is the stdout log.
   */
  acpClient: string;
}

/** The path of `meta.N.json` of attempt `attempt` in `runDir` alone ({@link attemptAuditPaths} builds them all). */
export function attemptMetaPath(runDir: string, attempt: number): string {
  return path.join(runDir, AUDIT_DIR, `meta.${attempt}.json`);
}

/** Paths of the audit files of attempt `attempt` in `runDir`. */
export function attemptAuditPaths(runDir: string, attempt: number): AttemptAuditPaths {
  const dir = path.join(runDir, AUDIT_DIR);
  const file = (name: string, ext: string): string => path.join(dir, `${name}.${attempt}.${ext}`);
  return {
    dir,
    meta: attemptMetaPath(runDir, attempt),
    stdin: file('stdin', 'log'),
    stdout: file('stdout', 'log'),
    stderr: file('stderr', 'log'),
    ptyOutput: file('pty-output', 'log'),
    ptyTiming: file('pty-timing', 'log'),
    fsBefore: file('fs-before', 'json'),
    fsAfter: file('fs-after', 'json'),
    fsDiff: file('fs-diff', 'json'),
    rasp: file('rasp', 'jsonl'),
    fcmp: file('fcmp', 'jsonl'),
    conformance: file('conformance-report', 'json'),
    modelRequests: file('model-requests', 'jsonl'),
    acpClient: file('acp-client', 'jsonl'),
  };
}

/** The git diff of attempt `attempt` (a git workspace only). */
export function attemptGitDiffPath(runDir: string, attempt: number): string {
  return path.join(runDir, AUDIT_DIR, `git-diff.${attempt}.patch`);
}

/** The scratch index git uses to diff attempt `attempt` against the seed commit. */
export function attemptGitIndexPath(runDir: string, attempt: number): string {
  return path.join(runDir, AUDIT_DIR, `.git-index.${attempt}`);
}

/**
 * Removes whatever stands at the paths of attempt `attempt`'s audit files but its meta (which reserved the attempt):
 * a new attempt has none, so anything there was put by the agent of an earlier one (the run directory is its
 * working directory). A FIFO there would hang the harness, a symlink would redirect its writes. Returns the names
 * removed, for a diagnostic.
 */
export function clearAttemptPaths(runDir: string, attempt: number): string[] {
  const { dir, meta, ...files } = attemptAuditPaths(runDir, attempt);
  const removed: string[] = [];
  for (const file of [
    ...Object.values(files),
    attemptGitDiffPath(runDir, attempt),
    attemptGitIndexPath(runDir, attempt),
  ]) {
    if (!fs.lstatSync(file, { throwIfNoEntry: false })) continue;
    fs.rmSync(file, { recursive: true, force: true });
    removed.push(path.basename(file));
  }
  return removed;
}

/** Appends raw chunks to the stream logs and tracks each stream's byte offset. */
export class RawLogWriter {
  private readonly fds = new Map<StreamName | 'timing', number>();
  private readonly offsets = new Map<StreamName, number>();

  /**
   * @param failures where a log that cannot be written (disk full, …) is recorded; that log is then no longer
   * written, and the attempt goes on (the engine is never stopped by a full disk), ending AUDIT_WRITE_FAILED.
   */
  constructor(
    private readonly paths: AttemptAuditPaths,
    readonly failures: AuditWriteFailures = new AuditWriteFailures(),
  ) {}

  private file(key: StreamName | 'timing'): string {
    return key === 'stdout'
      ? this.paths.stdout
      : key === 'stderr'
        ? this.paths.stderr
        : key === 'pty'
          ? this.paths.ptyOutput
          : this.paths.ptyTiming;
  }

  private write(key: StreamName | 'timing', data: Uint8Array | string): void {
    const file = this.file(key);
    if (this.failures.has(file)) return;
    this.failures.attempt(file, () => {
      let fd = this.fds.get(key);
      if (fd === undefined) {
        fd = openOwnFile(file, 'append');
        this.fds.set(key, fd);
      }
      if (typeof data === 'string') fs.writeSync(fd, data);
      else fs.writeSync(fd, data);
    });
  }

  /** Creates the given logs empty (so every file exists even when nothing is printed). */
  touch(keys: ReadonlyArray<StreamName | 'timing'>): void {
    for (const key of keys) this.write(key, '');
  }

  /** Appends a chunk; returns its byte offset in the stream's log (as if written, when the log failed). */
  append(stream: StreamName, chunk: Uint8Array): number {
    const from = this.offsets.get(stream) ?? 0;
    this.write(stream, chunk);
    this.offsets.set(stream, from + chunk.byteLength);
    return from;
  }

  /** Appends one line of PTY timing. */
  timing(line: string): void {
    this.write('timing', `${line}\n`);
  }

  /** Closes every file; safe to call twice. */
  close(): void {
    for (const fd of this.fds.values()) {
      try {
        fs.closeSync(fd);
      } catch {
        // already closed
      }
    }
    this.fds.clear();
  }
}

/** An audit file that could not be written, and why. */
export interface AuditWriteFailure {
  file: string;
  errno: string | null;
  message: string;
}

/**
 * The audit files of an attempt that could not be written. Every audit write of the attempt goes through
 * {@link AuditWriteFailures.attempt}, so a full disk is recorded per file, never thrown at the engine's run;
 * the attempt then ends with AUDIT_WRITE_FAILED naming what was written and what was not.
 */
export class AuditWriteFailures {
  readonly list: AuditWriteFailure[] = [];

  /** True when writing `file` failed before. */
  has(file: string): boolean {
    return this.list.some((failure) => failure.file === file);
  }

  /** Runs the write `fn` of `file`; a failure is recorded (once per file), not thrown. */
  attempt(file: string, fn: () => void): void {
    try {
      fn();
    } catch (error) {
      this.record(file, error);
    }
  }

  /** Like {@link attempt}, for an asynchronous write. */
  async attemptAsync(file: string, fn: () => Promise<unknown>): Promise<void> {
    try {
      await fn();
    } catch (error) {
      this.record(file, error);
    }
  }

  private record(file: string, error: unknown): void {
    if (this.has(file)) return;
    this.list.push({
      file,
      errno: (error as NodeJS.ErrnoException | null)?.code ?? null,
      message: error instanceof Error ? error.message : String(error),
    });
  }
}

/**
 * The AUDIT_WRITE_FAILED error of an attempt: which audit files could not be written (and why), which are on
 * disk, and the error the attempt had before, if any.
 */
export function auditWriteFailed(
  paths: AttemptAuditPaths,
  attempt: number,
  failures: readonly AuditWriteFailure[],
  previous: AgentHarnessError | null,
): AgentHarnessError {
  const failed = new Set(failures.map((f) => f.file));
  let written: string[] = [];
  try {
    written = fs
      .readdirSync(paths.dir)
      .map((name) => path.join(paths.dir, name))
      .filter((file) => !failed.has(file))
      .sort();
  } catch {
    // the audit dir itself is unreadable
  }
  const first = failures[0];
  const names = failures.map((f) => path.basename(f.file)).join(', ');
  return new AgentHarnessError(
    'AUDIT_WRITE_FAILED',
    `The audit of attempt ${attempt} is incomplete: could not write ${names} (${first?.errno ?? 'error'}: ${first?.message ?? 'unknown'}).${previous && previous.code !== 'AUDIT_WRITE_FAILED' ? ` Before that the attempt had ${previous.code}: ${previous.message}` : ''}`,
    {
      attempt,
      details: {
        failed: failures.map((f) => ({ file: f.file, errno: f.errno, message: f.message })),
        written,
        previous:
          previous && previous.code !== 'AUDIT_WRITE_FAILED'
            ? { code: previous.code, message: previous.message }
            : null,
      },
    },
  );
}

/** The first look at the end of an FCMP file for its last seq; each further look reads four times as much. */
const SEQ_TAIL_BYTES = 64 * 1024;

/**
 * The seq of the last complete FCMP line of `file` that has one (a torn last line is passed over), or null: no such
 * line, or not a regular file (a FIFO an engine left in its run directory is not read). Reads the file from its end,
 * 64 KiB first, so a long attempt's FCMP is not read whole to continue its seq.
 */
export function lastSeqInFcmp(file: string): number | null {
  let checked: CheckedInputFile;
  try {
    checked = openInputFile(file, { what: 'FCMP log' });
  } catch {
    return null;
  }
  const { fd, size } = checked;
  try {
    for (let window = SEQ_TAIL_BYTES; ; window *= 4) {
      const start = Math.max(0, size - window);
      const buffer = Buffer.alloc(size - start);
      let read = 0;
      for (let n = -1; n !== 0 && read < buffer.length; read += n)
        n = fs.readSync(fd, buffer, read, buffer.length - read, start + read);
      const lines = buffer.toString('utf8', 0, read).split('\n');
      // The first line of a window that starts inside the file may be cut: only complete lines count.
      for (let i = lines.length - 1; i >= (start > 0 ? 1 : 0); i -= 1) {
        const line = lines[i]!.trim();
        if (line === '') continue;
        try {
          const seq = (JSON.parse(line) as { seq?: unknown }).seq;
          if (typeof seq === 'number') return seq;
        } catch {
          // a torn line: look further up
        }
      }
      if (start === 0) return null;
    }
  } finally {
    fs.closeSync(fd);
  }
}

/** Reads the last FCMP seq of the attempts before `attempt` (0 when there are none). */
export function lastFcmpSeq(runDir: string, attempt: number): number {
  for (let n = attempt - 1; n >= 1; n -= 1) {
    const seq = lastSeqInFcmp(attemptAuditPaths(runDir, n).fcmp);
    if (seq !== null) return seq;
  }
  return 0;
}

/**
 * FCMP seq numbers each attempt owns: attempt N numbers its events from `(N - 1) * FCMP_SEQ_BLOCK + 1`. Concurrent
 * attempts of one run (five `resume`s at once) translate at the same time, before an earlier one has written its
 * FCMP, so "the previous attempt's last seq" is not known when an attempt starts; a block derived from the attempt
 * number keeps seq unique and strictly increasing across the run's fcmp.N.jsonl files in attempt order whatever
 * order the attempts finish in. An attempt never emits a million events; past that its seq would run into the next
 * attempt's block.
 */
export const FCMP_SEQ_BLOCK = 1_000_000;

/**
 * The seq an attempt's FCMP continues from (its first event gets this + 1): the start of its block, or the last seq
 * of an earlier attempt if that is higher (runs recorded before seq blocks, or an attempt past its block).
 */
export function fcmpSeqStart(runDir: string, attempt: number): number {
  return Math.max((attempt - 1) * FCMP_SEQ_BLOCK, lastFcmpSeq(runDir, attempt));
}

/** Writes empty fs snapshot/diff files for an attempt that never got to take them (failed before spawn). */
export async function ensureFsAuditFiles(audit: AttemptAuditPaths, runDir: string): Promise<void> {
  for (const file of [audit.fsBefore, audit.fsAfter]) {
    if (!fs.existsSync(file))
      await writeJsonAtomic(file, {
        root: runDir,
        taken_at: new Date().toISOString(),
        excluded: ['.audit', '.git'],
        truncated: false,
        entries: [],
      });
  }
  if (!fs.existsSync(audit.fsDiff))
    await writeJsonAtomic(audit.fsDiff, { root: runDir, created: [], modified: [], deleted: [] });
}
