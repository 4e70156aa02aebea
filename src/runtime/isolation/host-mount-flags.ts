/**
 * The host's mount table as a read-only bind needs it: in a user namespace the kernel locks a mount's nosuid, nodev,
 * noexec and atime flags, so the remount that makes a bind read-only must repeat those of the mount its source is on.
 */
import fs from 'node:fs';
import { isWithin } from '../path-within.js';

/** The per-mount flags a bind keeps from its source: a remount that dropped one (to add `ro`) would be refused. */
const KEPT_FLAGS = new Set(['nosuid', 'nodev', 'noexec', 'noatime', 'nodiratime', 'relatime', 'strictatime']);

/** The mounts of this process (`/proc/self/mountinfo`): mount point and per-mount options; [] where unreadable. */
export function readMounts(): Array<{ at: string; flags: string[] }> {
  let text: string;
  try {
    // Byte for byte: paths are UTF-8 with a few octal escapes, decoded once unescaped.
    text = fs.readFileSync('/proc/self/mountinfo', 'latin1');
  } catch {
    return [];
  }
  const unescaped = (field: string): string =>
    field.replace(/\\([0-7]{3})/g, (_, octal: string) => String.fromCharCode(parseInt(octal, 8)));
  return text
    .split('\n')
    .filter(Boolean)
    .map((line) => {
      const fields = line.split(' ');
      return {
        at: Buffer.from(unescaped(fields[4] ?? ''), 'latin1').toString('utf8'),
        flags: (fields[5] ?? '').split(','),
      };
    });
}

/**
 * The flags of the mount that holds `file` that a read-only bind must repeat: in a user namespace the kernel locks
 * a mount's nosuid, nodev, noexec and atime flags, and the remount that makes a bind read-only must keep them.
 */
export function keptFlags(file: string, mounts: ReadonlyArray<{ at: string; flags: string[] }>): string[] {
  let best: { at: string; flags: string[] } | null = null;
  for (const mount of mounts) {
    if (isWithin(file, mount.at) && (!best || mount.at.length >= best.at.length)) best = mount;
  }
  return (best?.flags ?? []).filter((flag) => KEPT_FLAGS.has(flag));
}

/** A read-only bind's fstab options for `source`: `bind,ro` and the flags its mount locks ({@link keptFlags}). */
export function readOnlyBindOptions(source: string, mounts: ReadonlyArray<{ at: string; flags: string[] }>): string {
  return ['bind', 'ro', ...keptFlags(source, mounts)].join(',');
}
