/**
 * A mount plan's new root on the host (mount-plan.ts builds the plan): the skeleton the agent's `/` is bound from,
 * the mount point, and the fstabs the namespace init's setup mounts (`runtime/namespace-mounts.cjs`).
 */
import fs from 'node:fs';
import path from 'node:path';
import { readMounts, readOnlyBindOptions } from './host-mount-flags.js';
import { type MountPlan, WRITABLE_SCRATCH } from './mount-plan.js';
import { isWithin } from '../path-within.js';

/** A path escaped for an fstab field (libmount reads `\ooo` octal escapes). */
export function fstabEscape(field: string): string {
  return Buffer.from(field, 'utf8')
    .toString('latin1')
    .replace(/[^A-Za-z0-9/._+@:,=-]/g, (char) => `\\${char.charCodeAt(0).toString(8).padStart(3, '0')}`);
}

/** The fstab text of `mounts` with their targets under `root` (the empty host directory the new root is bound on). */
export function planFstab(plan: Pick<MountPlan, 'mounts'>, root: string): string {
  return plan.mounts
    .map(
      (mount) =>
        `${fstabEscape(mount.inRoot ? path.join(root, mount.source) : mount.source)} ${fstabEscape(path.join(root, mount.target))} ${mount.fstype} ${mount.options} 0 0\n`,
    )
    .join('');
}

/** Where a new root's parts are on the host: what {@link writeNewRoot} made. */
export interface NewRootFiles {
  /** The empty directory the skeleton is bound on (in the namespace only). */
  root: string;
  /** The skeleton: the agent's `/`, bound read-only as it is. */
  skeleton: string;
  /** The fstab of the new root and of every mount that is not under a scratch directory, in order. */
  fstab: string;
  /** The fstab of the mounts under /tmp and /dev/shm, mounted once their part of the skeleton is copied there. */
  scratchFstab: string;
}

/** A new root made by {@link writeNewRoot}: its parts, and the skeleton's entries to copy into the scratch tmpfs. */
export interface NewRoot extends NewRootFiles {
  /**
   * The skeleton's entries right under /tmp and /dev/shm (the way down to a run root in the host's /tmp, say), as
   * the agent sees them: copied into the fresh tmpfs there (`cp -a`) before {@link NewRootFiles.scratchFstab}'s
   * mounts. Empty for a run root elsewhere: the setup then has no copy and no second `mount -a`.
   */
  scratchTops: string[];
}

/** Where the parts of a new root made in `dir` are (see {@link writeNewRoot}). */
export function newRootFiles(dir: string): NewRootFiles {
  return {
    root: path.join(dir, 'root'),
    skeleton: path.join(dir, 'skeleton'),
    fstab: path.join(dir, 'fstab'),
    scratchFstab: path.join(dir, 'fstab-scratch'),
  };
}

/** The root bind's options by the folder new roots are made in (one per process: `newRootBase()`). */
const rootOptionsByBase = new Map<string, string>();

/**
 * The read-only bind options of a new root made in `dir`: those of the folder holding it, read from the mount table
 * once per folder rather than at every attempt (the plan has read it already; a skeleton lives on its folder's mount).
 */
function rootBindOptions(dir: string): string {
  const base = path.dirname(dir);
  let options = rootOptionsByBase.get(base);
  if (options === undefined) rootOptionsByBase.set(base, (options = readOnlyBindOptions(dir, readMounts())));
  return options;
}

/** True when `target` (a path the agent sees) is a scratch directory's or under one. */
function inScratch(target: string): boolean {
  return WRITABLE_SCRATCH.some((scratch) => target !== scratch && isWithin(target, scratch));
}

/**
 * Makes a new root's parts in `dir` (an empty directory private to the harness): the skeleton of `plan` (directories,
 * with the entry's mode where it has one; empty files; symlinks), the two fstabs, and the empty mount point. On the
 * host, while the init starts. The first fstab line binds the skeleton on the mount point read-only (with the flags
 * its host mount locks in a user namespace): the agent's `/` from the start, no copy and no remount.
 */
export function writeNewRoot(plan: Pick<MountPlan, 'skeleton' | 'mounts'>, dir: string): NewRoot {
  const files = newRootFiles(dir);
  fs.mkdirSync(files.root);
  fs.mkdirSync(files.skeleton);
  // The agent's `/`: as a tmpfs's root would be.
  fs.chmodSync(files.skeleton, 0o755);
  // Sorted parents first (buildMountPlan), so each entry's directory is there.
  for (const entry of plan.skeleton) {
    const at = path.join(files.skeleton, entry.path);
    if (entry.type === 'dir') {
      fs.mkdirSync(at, { recursive: true });
      if (entry.target) fs.chmodSync(at, parseInt(entry.target, 8));
    } else if (entry.type === 'file') fs.writeFileSync(at, '', { flag: 'a' });
    else fs.symlinkSync(entry.target ?? '', at);
  }
  const rootLine = `${fstabEscape(files.skeleton)} ${fstabEscape(files.root)} none ${rootBindOptions(dir)} 0 0\n`;
  const outside = plan.mounts.filter((mount) => !inScratch(mount.target));
  const inside = plan.mounts.filter((mount) => inScratch(mount.target));
  fs.writeFileSync(files.fstab, rootLine + planFstab({ mounts: outside }, files.root));
  fs.writeFileSync(files.scratchFstab, planFstab({ mounts: inside }, files.root));
  const scratchTops = plan.skeleton
    .filter((entry) => WRITABLE_SCRATCH.includes(path.dirname(entry.path) as (typeof WRITABLE_SCRATCH)[number]))
    .map((entry) => entry.path);
  return { ...files, scratchTops };
}
