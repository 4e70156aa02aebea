/**
 * Removing an attempt's new root (its skeleton, its fstabs, its mount point once the kernel lets go of it). Moved out
 * of attempt-isolation.ts whole (issue 44).
 */
import fs from 'node:fs';
import path from 'node:path';
import type { NewRootFiles } from './new-root.js';

/**
 * Removes a new root from the host: the parts only the harness wrote (the skeleton, the fstabs), then its mount point
 * and the private directory holding it, never recursively: on the host the mount point is an empty directory (the
 * bind on it lived in the namespace only). In the background; nothing waits for it.
 */
export function removeNewRoot(files: NewRootFiles): void {
  const parts = [files.skeleton, files.fstab, files.scratchFstab];
  void Promise.all(
    parts.map((part) => fs.promises.rm(part, { recursive: true, force: true }).catch(() => undefined)),
  ).then(() => removeMountPoint(files.root));
}

/**
 * Removes a mount point and its private directory. While a namespace that had not pivoted yet is being torn down (an
 * attempt ended during its setup) it is still a mount point there (EBUSY): tried again for a few seconds.
 */
export function removeMountPoint(root: string, tries = 40): void {
  fs.rmdir(root, (error) => {
    if (error?.code === 'EBUSY' && tries > 1) setTimeout(() => removeMountPoint(root, tries - 1), 100).unref();
    else fs.rmdir(path.dirname(root), () => undefined);
  });
}
