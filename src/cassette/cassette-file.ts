/**
 * The cassette file as an input: read only when it is a regular file within a size limit (a FIFO named by
 * `--cassette` used to block the read, and the process, for good), and, when it is about to be recorded, refused if
 * something other than a regular file (a FIFO, a device, a directory, a symbolic link) is already at its path. The
 * recording itself replaces the file by a rename (atomic-write.ts), which never writes through a link nor opens a FIFO.
 */
import fs from 'node:fs';
import { AgentHarnessError } from '../errors/index.js';
import { readInputBytesSync } from '../runtime/bounded-input.js';
import { readIntegerEnv } from '../runtime/integer-setting.js';

/** Default size limit of a cassette read for replay (256 MiB); override with `AGENT_HARNESS_MAX_CASSETTE_BYTES`. */
export const DEFAULT_MAX_CASSETTE_BYTES = 256 * 1024 * 1024;

/** The variable that sets the cassette size limit. */
export const MAX_CASSETTE_BYTES_ENV = 'AGENT_HARNESS_MAX_CASSETTE_BYTES';

/**
 * Size limit of a cassette: `AGENT_HARNESS_MAX_CASSETTE_BYTES` (bytes, 1 or more), else 256 MiB; CONFIG_INVALID when
 * set badly. A cassette is parsed whole, which costs several times its size in memory.
 */
export function maxCassetteBytes(env: NodeJS.ProcessEnv = process.env): number {
  return readIntegerEnv(env, MAX_CASSETTE_BYTES_ENV, { fallback: DEFAULT_MAX_CASSETTE_BYTES, min: 1, unit: 'bytes' });
}

/**
 * The text of the cassette `file`: CASSETTE_NOT_FOUND when it does not exist, INPUT_NOT_REGULAR_FILE when it is a
 * FIFO, a device or a directory (refused at once, never waited on), INPUT_TOO_LARGE past {@link maxCassetteBytes},
 * CASSETTE_INVALID when it cannot be read otherwise.
 */
export function readCassetteText(file: string, env: NodeJS.ProcessEnv = process.env): string {
  try {
    return readInputBytesSync(file, {
      what: 'cassette',
      maxBytes: maxCassetteBytes(env),
      unreadableCode: 'CASSETTE_INVALID',
      tooLargeHint: `Record a shorter conversation, or raise the limit with ${MAX_CASSETTE_BYTES_ENV}=<bytes>.`,
    }).toString('utf8');
  } catch (error) {
    const cause = error instanceof AgentHarnessError ? error.cause : undefined;
    if ((cause as NodeJS.ErrnoException | undefined)?.code === 'ENOENT')
      throw new AgentHarnessError('CASSETTE_NOT_FOUND', `No cassette at ${file}.`, { details: { path: file } });
    throw error;
  }
}

/**
 * Checks the path a cassette is about to be recorded to: nothing there yet, or a regular file (replaced when the
 * recording is written). Anything else is INPUT_NOT_REGULAR_FILE before the attempt starts: a FIFO or a device is
 * not a cassette, a directory cannot be replaced by one, and a symbolic link would be replaced by the recording
 * rather than written through, which is not what its owner meant either way.
 */
export function assertCassetteWritable(file: string): void {
  let stat: fs.Stats | undefined;
  try {
    stat = fs.lstatSync(file, { throwIfNoEntry: false });
  } catch (error) {
    throw new AgentHarnessError(
      'CASSETTE_INVALID',
      `Cannot check the cassette path ${file}: ${(error as Error).message}`,
      {
        cause: error,
        details: { path: file },
      },
    );
  }
  if (!stat || stat.isFile()) return;
  const kind = stat.isSymbolicLink()
    ? 'a symbolic link'
    : stat.isFIFO()
      ? 'a FIFO (named pipe)'
      : stat.isDirectory()
        ? 'a directory'
        : stat.isCharacterDevice() || stat.isBlockDevice()
          ? 'a device'
          : 'not a regular file';
  throw new AgentHarnessError(
    'INPUT_NOT_REGULAR_FILE',
    `The cassette ${file} is ${kind}; a recording is written only to a new path or over a regular file.`,
    {
      details: { file },
      hint: 'Pass --cassette a path to a regular file (or one that does not exist yet); for a link, pass the file it points at.',
    },
  );
}
