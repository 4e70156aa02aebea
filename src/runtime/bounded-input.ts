/**
 * Reading files from paths a user gave (translate inputs, model scripts, config files) without hanging or
 * exhausting memory. A path is opened non-blocking and checked with fstat on the open descriptor (no race
 * between check and read): a FIFO would block the read forever and a character device such as /dev/zero never
 * ends, so anything but a regular file is refused with INPUT_NOT_REGULAR_FILE. Whole-file reads are refused past
 * a size limit (INPUT_TOO_LARGE); large logs are streamed in chunks instead.
 */
import fs from 'node:fs';
import { AgentHarnessError, type ErrorCode } from '../errors/index.js';

/** Default size limit of a model script (16 MiB); override with `AGENT_HARNESS_MAX_SCRIPT_BYTES`. */
export const DEFAULT_MAX_SCRIPT_BYTES = 16 * 1024 * 1024;
/** Size limit of an engine config file or a SKILL.md read whole (16 MiB). */
export const MAX_CONFIG_BYTES = 16 * 1024 * 1024;
/**
 * Size limit of an audit JSON file the harness reads whole from a run directory (a meta, a conformance report): 64 MiB.
 * The run directory is the engine's working directory, so what is there is read as an input, FIFOs refused.
 */
export const MAX_AUDIT_FILE_BYTES = 64 * 1024 * 1024;
/** Size limit of a `--file DEST=SRC` seed file, held in memory until the run dir exists (64 MiB). */
export const MAX_SEED_FILE_BYTES = 64 * 1024 * 1024;

/** What to check an input file against. */
export interface InputFileCheck {
  /** What the file is, for messages ("model script", "translate --stdout file"). */
  what: string;
  /** Largest size accepted, in bytes; omitted: no limit (streamed reads). */
  maxBytes?: number;
  /** Code for a path that cannot be opened (missing, no permission); defaults to TRANSLATE_INPUT_INVALID. */
  unreadableCode?: ErrorCode;
  /** Hint for INPUT_TOO_LARGE, e.g. the variable that raises the limit. */
  tooLargeHint?: string;
  /**
   * A symbolic link at the path is refused (INPUT_NOT_REGULAR_FILE), not followed: for a run's audit files, which
   * the agent could replace with a link to a host file (`/etc/passwd`) that would then be printed or exported.
   */
  noFollow?: boolean;
}

/** An open, checked regular file. The caller closes `fd` (streams opened on it close it themselves). */
export interface CheckedInputFile {
  fd: number;
  size: number;
}

// O_NONBLOCK makes opening a FIFO return at once instead of waiting for a writer; it is absent on Windows,
// where FIFOs of this kind do not exist.
const OPEN_FLAGS = fs.constants.O_RDONLY | (fs.constants.O_NONBLOCK ?? 0);

function kindOf(stat: fs.Stats): string {
  if (stat.isFIFO()) return 'a FIFO (named pipe)';
  if (stat.isCharacterDevice()) return 'a character device';
  if (stat.isBlockDevice()) return 'a block device';
  if (stat.isDirectory()) return 'a directory';
  if (stat.isSocket()) return 'a socket';
  return 'not a regular file';
}

/** Opens `file` and checks it is a regular file within the limit; throws an {@link AgentHarnessError} otherwise. */
export function openInputFile(file: string, check: InputFileCheck): CheckedInputFile {
  let fd: number;
  try {
    fd = fs.openSync(file, check.noFollow ? OPEN_FLAGS | (fs.constants.O_NOFOLLOW ?? 0) : OPEN_FLAGS);
  } catch (error) {
    if (check.noFollow && (error as NodeJS.ErrnoException).code === 'ELOOP')
      throw new AgentHarnessError(
        'INPUT_NOT_REGULAR_FILE',
        `The ${check.what} ${file} is a symbolic link; a run's audit files are never read through a link (it may point anywhere on the host).`,
        {
          details: { file },
          hint: 'Something replaced the log with a link (the agent can write its .audit/ path on the host filesystem); read the file it points at yourself if you trust it.',
        },
      );
    throw new AgentHarnessError(
      check.unreadableCode ?? 'TRANSLATE_INPUT_INVALID',
      `Cannot read ${check.what} ${file}: ${(error as Error).message}`,
      { cause: error, details: { file } },
    );
  }
  try {
    const stat = fs.fstatSync(fd);
    if (!stat.isFile()) {
      throw new AgentHarnessError(
        'INPUT_NOT_REGULAR_FILE',
        `The ${check.what} ${file} is ${kindOf(stat)}, not a regular file; it could block or never end.`,
        { details: { file } },
      );
    }
    if (check.maxBytes !== undefined && stat.size > check.maxBytes) {
      throw new AgentHarnessError(
        'INPUT_TOO_LARGE',
        `The ${check.what} ${file} has ${stat.size} bytes, more than the limit of ${check.maxBytes}.`,
        {
          details: { file, size: stat.size, max_bytes: check.maxBytes },
          ...(check.tooLargeHint ? { hint: check.tooLargeHint } : {}),
        },
      );
    }
    return { fd, size: stat.size };
  } catch (error) {
    fs.closeSync(fd);
    throw error;
  }
}

/** Checks `file` like {@link openInputFile} and closes it again; returns its size. */
export function checkInputFile(file: string, check: InputFileCheck): number {
  const { fd, size } = openInputFile(file, check);
  fs.closeSync(fd);
  return size;
}

/** Reads a checked file whole, synchronously (for callers that are sync); `maxBytes` should be set. */
export function readInputBytesSync(file: string, check: InputFileCheck): Buffer {
  const { fd, size } = openInputFile(file, check);
  try {
    // Read at most one byte past the checked size: a file that grew since is refused, not read without end.
    const limit = check.maxBytes ?? size;
    const buffer = Buffer.alloc(Math.min(size, limit) + 1);
    let read = 0;
    for (let n = -1; n !== 0 && read < buffer.length; read += n)
      n = fs.readSync(fd, buffer, read, buffer.length - read, null);
    if (read > limit) {
      throw new AgentHarnessError(
        'INPUT_TOO_LARGE',
        `The ${check.what} ${file} grew past the limit of ${limit} bytes while it was read.`,
        { details: { file, max_bytes: limit } },
      );
    }
    return buffer.subarray(0, read);
  } finally {
    fs.closeSync(fd);
  }
}

/** Reads a checked file whole as UTF-8 (scripts, config files); `maxBytes` should be set. */
export async function readInputText(file: string, check: InputFileCheck): Promise<string> {
  const { fd } = openInputFile(file, check);
  try {
    // Read through the descriptor already checked; the limit is enforced again in case the file grew.
    const chunks: Buffer[] = [];
    let total = 0;
    for await (const chunk of fs.createReadStream('', { fd, autoClose: false })) {
      total += (chunk as Buffer).length;
      if (check.maxBytes !== undefined && total > check.maxBytes) {
        throw new AgentHarnessError(
          'INPUT_TOO_LARGE',
          `The ${check.what} ${file} grew past the limit of ${check.maxBytes} bytes while it was read.`,
          { details: { file, max_bytes: check.maxBytes } },
        );
      }
      chunks.push(chunk as Buffer);
    }
    return Buffer.concat(chunks).toString('utf8');
  } finally {
    fs.closeSync(fd);
  }
}

const NEWLINE = 0x0a;
/** Size of the chunks {@link readLinesSync} reads. */
const LINE_CHUNK_BYTES = 1024 * 1024;

/**
 * The lines of `chunks`, split at `\n` and decoded as UTF-8 each (a character cut between two chunks is decoded
 * whole); the unterminated last line too when `tail`. A chunk may be a reused buffer: it is not kept once the next
 * one is asked for.
 */
export function* splitLines(chunks: Iterable<Uint8Array>, tail = false): Generator<string> {
  let carry: Buffer | null = null;
  for (const chunk of chunks) {
    const bytes = Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    const data: Buffer = carry ? Buffer.concat([carry, bytes]) : bytes;
    let start = 0;
    for (let newline = data.indexOf(NEWLINE); newline >= 0; newline = data.indexOf(NEWLINE, start)) {
      yield data.toString('utf8', start, newline);
      start = newline + 1;
    }
    carry = start < data.length ? Buffer.from(data.subarray(start)) : null;
  }
  if (tail && carry) yield carry.toString('utf8');
}

/** The lines of a checked file ({@link splitLines}), read synchronously in chunks of 1 MiB: a file of any size. */
export function* readLinesSync(file: string, check: InputFileCheck, tail = false): Generator<string> {
  const { fd } = openInputFile(file, check);
  try {
    const buffer = Buffer.allocUnsafe(LINE_CHUNK_BYTES);
    yield* splitLines(
      (function* () {
        for (
          let read = fs.readSync(fd, buffer, 0, buffer.length, null);
          read > 0;
          read = fs.readSync(fd, buffer, 0, buffer.length, null)
        )
          yield buffer.subarray(0, read);
      })(),
      tail,
    );
  } finally {
    fs.closeSync(fd);
  }
}

/** Size of the chunks {@link streamInputFile} reads. */
export const STREAM_CHUNK_BYTES = 256 * 1024;

function readAt(fd: number, position: number, buffer: Buffer): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    fs.read(fd, buffer, 0, buffer.length, position, (error, bytesRead) =>
      error ? reject(error) : resolve(buffer.subarray(0, bytesRead)),
    );
  });
}

/**
 * Streams a checked file in chunks of {@link STREAM_CHUNK_BYTES}. The next chunk is read while the caller works on
 * the current one (one read ahead, never more), so a consumer slower than the disk never waits for it. Aborting
 * `signal` ends the iteration with the signal's reason; the descriptor is closed either way, once no read is pending.
 * With `reuseChunks`, two buffers take turns: a chunk is valid only until the next one is asked for (a consumer that
 * is done with each chunk by then — a line splitter — leaves no buffer for the GC, whose lag would otherwise let
 * memory grow with the file).
 */
export async function* streamInputFile(
  file: string,
  check: InputFileCheck,
  signal?: AbortSignal,
  options: { reuseChunks?: boolean } = {},
): AsyncGenerator<Buffer> {
  const { fd } = openInputFile(file, check);
  const buffers = options.reuseChunks
    ? [Buffer.allocUnsafe(STREAM_CHUNK_BYTES), Buffer.allocUnsafe(STREAM_CHUNK_BYTES)]
    : null;
  let reads = 0;
  const read = (position: number): Promise<Buffer> =>
    readAt(fd, position, buffers ? buffers[reads++ % 2]! : Buffer.allocUnsafe(STREAM_CHUNK_BYTES));
  let pending: Promise<Buffer> | null = null;
  try {
    let position = 0;
    pending = read(position);
    for (;;) {
      const chunk = await pending;
      pending = null;
      signal?.throwIfAborted();
      if (chunk.length === 0) return;
      position += chunk.length;
      pending = read(position);
      yield chunk;
    }
  } finally {
    // A read still in flight would use the descriptor after it is closed (and maybe reused): wait for it first.
    if (pending) await pending.catch(() => undefined);
    fs.closeSync(fd);
  }
}
