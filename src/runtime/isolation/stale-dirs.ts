/**
 * The private temporary directories an attempt's isolation makes (`ah-root-<pid>-*`, the new root's parts;
 * `ah-ns-<pid>-*`, the init's sockets) carry the pid of the harness that made them. A harness killed with SIGKILL
 * cannot remove its own: a later attempt sweeps those whose owner is gone, off its critical path (its isolation's
 * close) and a few at a time.
 *
 * Only what the harness itself makes there is removed: the empty mount point `root` (never while something is
 * mounted on it: that is a live namespace's), the `skeleton` tree and the `fstab` files, or the sockets; then the
 * directory, only if that left it empty. Nothing is followed through a symlink, and a directory of another user, or
 * one whose owner still exists (or whose pid was reused), is left as it is.
 */
import fsSync from 'node:fs';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { newRootFiles } from './new-root.js';

/** The kinds of directory swept, by name prefix (`<prefix><pid>-<random>`). */
export type StaleDirKind = 'ah-root-' | 'ah-ns-';

/** At most this many directories of one kind are removed (or tried) per sweep (each sweep is one attempt's). */
const SWEEP_LIMIT = 4;

/** statfs(2)'s `f_type` of a tmpfs. */
const TMPFS_MAGIC = 0x01021994;
/** Linux's shared-memory tmpfs, usually mounted for every user to write (sticky, like /tmp). */
const SHM = '/dev/shm';

let rootBase: string | undefined;

/** True when {@link SHM} is a tmpfs (statfs type) this process may write. */
function shmIsWritableTmpfs(): boolean {
  try {
    fsSync.accessSync(SHM, fsSync.constants.W_OK | fsSync.constants.X_OK);
    return fsSync.statfsSync(SHM).type === TMPFS_MAGIC;
  } catch {
    return false;
  }
}

/**
 * Where the new roots' parts are made (`ah-root-<pid>-*`): `/dev/shm` when it is a tmpfs this process may write, else
 * the temp dir. An attempt makes and removes some 30 directories, empty files and links there (the skeleton, bound
 * read-only as the agent's `/` in its namespace) and the mount point; on this machine's ext4 `/tmp` each costs
 * 0.1–0.3 ms, on a tmpfs a few µs (issue 44's containment figure). Nothing there is ever run (what runs comes through
 * binds of its own), so the filesystem's own flags (`noexec`) do not matter. Decided once per process.
 */
export function newRootBase(): string {
  rootBase ??= shmIsWritableTmpfs() ? SHM : os.tmpdir();
  return rootBase;
}

/** The template for `fs.mkdtemp` of a directory of `kind` under `base`, owned by this process. */
export function ownedDirPrefix(base: string, kind: StaleDirKind): string {
  return path.join(base, `${kind}${process.pid}-`);
}

/** Whether process `pid` exists (one of another user's counts: EPERM). */
function processExists(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code !== 'ESRCH';
  }
}

/** A swept directory's name: its kind and its owner's pid (an older harness's names have none). */
const OWNED_NAME = /^(ah-root-|ah-ns-)(\d+)-[^/]+$/;

/** The owner's pid in a directory's name of `kind`, or null when the name has none. */
function ownerPid(name: string, kind: StaleDirKind): number | null {
  const match = OWNED_NAME.exec(name);
  const pid = match?.[1] === kind ? Number(match[2]) : Number.NaN;
  return Number.isSafeInteger(pid) && pid > 0 ? pid : null;
}

/** The entry's lstat, or null when it is gone. */
async function lstatOrNull(file: string): Promise<Awaited<ReturnType<typeof fs.lstat>> | null> {
  return fs.lstat(file).catch(() => null);
}

/** Removes what the harness makes in one directory of `kind`, then the directory if that emptied it. */
async function removeStale(dir: string, kind: StaleDirKind): Promise<void> {
  const stat = await lstatOrNull(dir);
  // A real directory of this user's, as mkdtemp made it (never a symlink to one).
  if (!stat?.isDirectory() || (process.getuid && stat.uid !== process.getuid())) return;
  if (kind === 'ah-root-') {
    const files = newRootFiles(dir);
    const root = await lstatOrNull(files.root);
    // Something mounted on `root` (another device than its parent's): a live namespace's. Left whole.
    if (root && (!root.isDirectory() || root.dev !== stat.dev)) return;
    // fs.rm does not follow the skeleton's symlinks: it removes the links.
    if ((await lstatOrNull(files.skeleton))?.isDirectory())
      await fs.rm(files.skeleton, { recursive: true, force: true }).catch(() => undefined);
    for (const fstab of [files.fstab, files.scratchFstab])
      if ((await lstatOrNull(fstab))?.isFile()) await fs.unlink(fstab).catch(() => undefined);
    // Not empty, or a mount point after all (EBUSY): left.
    if (root) await fs.rmdir(files.root).catch(() => undefined);
  } else {
    for (const name of await fs.readdir(dir).catch(() => [] as string[])) {
      if (!/^(life|model|fwd-\d+)\.sock$/.test(name)) continue;
      if ((await lstatOrNull(path.join(dir, name)))?.isSocket())
        await fs.unlink(path.join(dir, name)).catch(() => undefined);
    }
  }
  // Anything else in it (not the harness's): left, with the directory.
  await fs.rmdir(dir).catch(() => undefined);
}

/**
 * Removes up to a few directories of each kind whose owning process is gone (see the module's comment): `ah-root-`
 * ones under `rootBase`, `ah-ns-` ones under `socketBase`, and `ah-root-` ones there too when it is another folder
 * (where a harness made them before {@link newRootBase} chose `/dev/shm`). Each folder is read once. Never throws: a
 * sweep that cannot read a folder or remove an entry leaves it for a later one.
 */
export async function sweepStaleDirs(rootBase: string, socketBase: string): Promise<void> {
  const rootNames = await readdirOrEmpty(rootBase);
  const socketNames = socketBase === rootBase ? rootNames : await readdirOrEmpty(socketBase);
  await sweepKind(rootBase, rootNames, 'ah-root-');
  if (socketBase !== rootBase) await sweepKind(socketBase, socketNames, 'ah-root-');
  await sweepKind(socketBase, socketNames, 'ah-ns-');
}

/** The names in `dir`, or none when it cannot be read. */
function readdirOrEmpty(dir: string): Promise<string[]> {
  return fs.readdir(dir).catch(() => [] as string[]);
}

/** Removes up to {@link SWEEP_LIMIT} directories of `kind` among `names` in `base` whose owner is gone. */
async function sweepKind(base: string, names: readonly string[], kind: StaleDirKind): Promise<void> {
  let seen = 0;
  for (const name of names) {
    if (seen >= SWEEP_LIMIT) return;
    const pid = ownerPid(name, kind);
    if (pid === null || pid === process.pid || processExists(pid)) continue;
    seen += 1;
    await removeStale(path.join(base, name), kind).catch(() => undefined);
  }
}
