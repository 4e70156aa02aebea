/**
 * The events of one attempt (RASP or FCMP) as they are recorded: each is written to its JSONL audit file at once,
 * with a synchronous write (on disk even if the harness dies), and kept in memory only while the attempt's events
 * stay under a byte budget. Past the budget the file is the only copy, so a long attempt's memory stays flat: the
 * events are read back from it when they are needed (a result's `rasp`/`fcmp` when a caller asks for them).
 *
 * The file lies in the run directory, which is the engine's working directory: what is read back must be what was
 * written. The spool writes at its own offsets, keeps a running SHA-256 of the bytes it wrote, and reads back
 * through its own descriptor (a rename or unlink does not matter) after checking that the first bytes of the file
 * hash to the same digest. Anything else is AUDIT_TAMPERED; the events are then not used.
 */
import { createHash, type Hash } from 'node:crypto';
import fs from 'node:fs';
import { AgentHarnessError } from '../errors/index.js';
import { openInputFile, readLinesSync, splitLines } from '../runtime/bounded-input.js';
import { readIntegerSetting } from '../runtime/integer-setting.js';
import { openOwnFile } from '../runtime/own-file.js';
import type { AuditWriteFailures } from './audit-files.js';

/** Bytes of JSON an attempt keeps in memory per event kind by default (4 MiB); past it the audit file is the copy. */
export const DEFAULT_EVENT_MEMORY_BYTES = 4 * 1024 * 1024;

/** The environment variable that sets the budget of the attempts a process runs (bytes, 0 or more). */
export const EVENT_MEMORY_ENV = 'AGENT_HARNESS_EVENT_MEMORY_BYTES';

/** The budget: the explicit one, else {@link EVENT_MEMORY_ENV}, else the default; CONFIG_INVALID for a bad value. */
export function resolveEventMemoryBytes(explicit: number | undefined, env: NodeJS.ProcessEnv = process.env): number {
  return readIntegerSetting({
    name: explicit === undefined ? EVENT_MEMORY_ENV : 'eventMemoryBytes',
    value: explicit ?? env[EVENT_MEMORY_ENV],
    fallback: DEFAULT_EVENT_MEMORY_BYTES,
    unit: 'bytes',
  });
}

/** How much of the file one read takes when events are read back. */
const READ_CHUNK_BYTES = 1024 * 1024;

/** One kind of event of an attempt, spooled to its JSONL audit file. */
export class EventSpool<T> {
  private kept: T[] | null = [];
  private keptBytes = 0;
  /** Events not on disk: those pushed after a write failed (the file is no longer written then). */
  private readonly unwritten: T[] = [];
  private fd: number | null = null;
  private written = 0;
  private readonly hash: Hash = createHash('sha256');

  /**
   * @param file the JSONL audit file, created (truncated) now
   * @param failures where a write that fails is recorded (the events are then kept in memory, whatever the budget)
   * @param budgetBytes JSON bytes kept in memory before the file becomes the only copy
   */
  constructor(
    readonly file: string,
    private readonly failures: AuditWriteFailures,
    private readonly budgetBytes: number = DEFAULT_EVENT_MEMORY_BYTES,
  ) {
    failures.attempt(file, () => {
      // Read and write: a spool past its budget reads its events back through this descriptor.
      this.fd = openOwnFile(file, 'readwrite');
    });
  }

  /** True while every event pushed is also in memory (the budget was never passed, or the file could not be written). */
  get inMemory(): boolean {
    return this.kept !== null;
  }

  /** Records `event`: written to the file now, kept in memory while under the budget. */
  push(event: T): void {
    const line = `${JSON.stringify(event)}\n`;
    if (this.fd !== null && !this.failures.has(this.file)) {
      const bytes = Buffer.from(line, 'utf8');
      this.failures.attempt(this.file, () => {
        for (let done = 0; done < bytes.length; )
          done += fs.writeSync(this.fd!, bytes, done, bytes.length - done, this.written + done);
        this.hash.update(bytes);
        this.written += bytes.length;
      });
    }
    if (this.fd === null || this.failures.has(this.file)) {
      // Not on disk: kept whatever the budget (with those kept before, if any).
      if (this.kept) this.kept.push(event);
      else this.unwritten.push(event);
      return;
    }
    if (!this.kept) return;
    this.kept.push(event);
    this.keptBytes += line.length;
    if (this.keptBytes > this.budgetBytes) this.kept = null;
  }

  /**
   * Every event in order: from memory, or read back from the file after checking it (AUDIT_TAMPERED when it is not
   * what was written). The file is checked whole before the first event is given. Read once the pushing is done.
   */
  *events(): Generator<T> {
    if (this.kept) {
      yield* this.kept;
      return;
    }
    this.verify();
    yield* this.readBack();
    yield* this.unwritten;
  }

  /** Every event as an array (from the file when not in memory: as large as the attempt's events). */
  all(): T[] {
    return this.kept ? this.kept : [...this.events()];
  }

  /**
   * Closes the spool's descriptor (nothing more is pushed). Events not in memory are read back from the file by its
   * path from then on, still checked against what was written.
   */
  close(): void {
    if (this.fd !== null) fs.closeSync(this.fd);
    this.fd = null;
  }

  /**
   * Throws AUDIT_TAMPERED unless the file is exactly what was written: the seal's tamper check where the agent can
   * write `.audit/` (see `seal-attempt.ts`). Reads the whole file.
   */
  check(): void {
    if (this.fd === null && this.written === 0) return;
    this.verify();
  }

  /** Throws AUDIT_TAMPERED unless the file's first bytes are exactly those written. */
  private verify(): void {
    const check = createHash('sha256');
    let read = 0;
    for (const chunk of this.chunks()) {
      check.update(chunk);
      read += chunk.length;
    }
    this.expect(check, read);
  }

  private expect(check: Hash, read: number): void {
    // A copy: the spool goes on writing (and hashing) after the seal's check, FCMP's last events among them.
    if (read !== this.written || check.digest('hex') !== this.hash.copy().digest('hex')) {
      throw new AgentHarnessError(
        'AUDIT_TAMPERED',
        `${this.file} is not what the harness wrote there (${read} of ${this.written} bytes read back, or other bytes): something changed it during the attempt, so its events are not used.`,
        {
          details: { file: this.file, written: this.written, read },
        },
      );
    }
  }

  /** The file's first `written` bytes, in chunks read through the spool's descriptor (or the path, once closed). */
  private *chunks(): Generator<Buffer> {
    const own = this.fd;
    const fd = own ?? openInputFile(this.file, { what: 'audit file', unreadableCode: 'AUDIT_TAMPERED' }).fd;
    try {
      const buffer = Buffer.allocUnsafe(Math.min(READ_CHUNK_BYTES, Math.max(1, this.written)));
      for (let position = 0; position < this.written; ) {
        const read = fs.readSync(fd, buffer, 0, Math.min(buffer.length, this.written - position), position);
        if (read === 0) return;
        position += read;
        yield buffer.subarray(0, read);
      }
    } finally {
      if (own === null) fs.closeSync(fd);
    }
  }

  /** The events of the file, checked again as they are read (a change after {@link verify} throws at the end). */
  private *readBack(): Generator<T> {
    const check = createHash('sha256');
    let read = 0;
    const hashed = function* (chunks: Iterable<Buffer>): Generator<Buffer> {
      for (const chunk of chunks) {
        check.update(chunk);
        read += chunk.length;
        yield chunk;
      }
    };
    yield* jsonlRecords<T>(hashed(this.chunks()));
    this.expect(check, read);
  }
}

/** The JSON value of each complete line of `chunks` (JSONL; an unterminated last line is not given). */
export function* jsonlRecords<T>(chunks: Iterable<Buffer>): Generator<T> {
  for (const line of splitLines(chunks)) yield JSON.parse(line) as T;
}

/** The records of a JSONL file, read in chunks (an audit file of any size; FIFOs and devices refused). */
export function* readJsonlFile<T>(file: string, what = 'audit file'): Generator<T> {
  for (const line of readLinesSync(file, { what })) yield JSON.parse(line) as T;
}
