/**
 * Writing the harness's own files in a run directory. The run directory is the engine's working directory, and
 * `.audit/` is inside it: the agent can put a FIFO, a symlink or a directory where the harness's next file goes (the
 * next attempt's `stdout.N.log`, this attempt's `model-requests.N.jsonl`). Opened as usual, a FIFO blocks the open or
 * the writes for good (the harness hangs; measured: a planted `stdout.N.log` FIFO held `resume` forever) and a symlink
 * sends the write to another file. So these files are opened without following a symlink (`O_NOFOLLOW`) and without
 * blocking (`O_NONBLOCK`), and anything but a regular file is refused with AUDIT_WRITE_FAILED, which an attempt
 * records as that file's write failure.
 */
import fs from 'node:fs';
import { AgentHarnessError } from '../errors/index.js';

const { O_APPEND, O_CREAT, O_NOFOLLOW, O_NONBLOCK, O_RDWR, O_TRUNC, O_WRONLY } = fs.constants;
/** Neither follows a symlink nor blocks on a FIFO (absent on Windows, where neither happens this way). */
const SAFE = (O_NOFOLLOW ?? 0) | (O_NONBLOCK ?? 0);

/** How an own file is opened: appended to, truncated for writing, or truncated for reading and writing. */
export type OwnFileMode = 'append' | 'truncate' | 'readwrite';

const FLAGS: Record<OwnFileMode, number> = {
  append: O_WRONLY | O_CREAT | O_APPEND | SAFE,
  truncate: O_WRONLY | O_CREAT | O_TRUNC | SAFE,
  readwrite: O_RDWR | O_CREAT | O_TRUNC | SAFE,
};

/**
 * Opens `file` for the harness to write; throws AUDIT_WRITE_FAILED when a symlink, a FIFO, a device or a directory
 * stands at its path (an open error such as ENOSPC or EACCES is thrown as it is).
 */
export function openOwnFile(file: string, mode: OwnFileMode): number {
  let fd: number;
  try {
    fd = fs.openSync(file, FLAGS[mode], 0o644);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    // ELOOP: a symlink at the path; ENXIO: a FIFO nobody reads (O_NONBLOCK); EISDIR: a directory.
    if (code === 'ELOOP' || code === 'ENXIO' || code === 'EISDIR') throw notRegular(file, code);
    throw error;
  }
  if (!fs.fstatSync(fd).isFile()) {
    fs.closeSync(fd);
    throw notRegular(file, 'not a regular file');
  }
  return fd;
}

function notRegular(file: string, what: string): AgentHarnessError {
  return new AgentHarnessError(
    'AUDIT_WRITE_FAILED',
    `${file} is not a regular file the harness can write (${what}): something else was put at its path, and it is not written through.`,
    {
      details: { file, errno: what },
    },
  );
}

/** Writes `data` to an own file opened in `mode` (see {@link openOwnFile}). */
function writeOwn(file: string, data: string | Uint8Array, mode: 'truncate' | 'append'): void {
  const fd = openOwnFile(file, mode);
  try {
    fs.writeFileSync(fd, data);
  } finally {
    fs.closeSync(fd);
  }
}

/** `fs.writeFileSync` for an own file (see {@link openOwnFile}). */
export function writeOwnFileSync(file: string, data: string | Uint8Array): void {
  writeOwn(file, data, 'truncate');
}

/** `fs.appendFileSync` for an own file (see {@link openOwnFile}). */
export function appendOwnFileSync(file: string, data: string | Uint8Array): void {
  writeOwn(file, data, 'append');
}
