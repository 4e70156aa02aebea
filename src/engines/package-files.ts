/**
 * Reading an installed npm package's files for a native launch (each engine's `native-launch.ts`): its manifest,
 * bounded, real paths, and whether an executable is a given file of a given package; a file that is missing or
 * unreadable is null, never an error.
 */
import fs from 'node:fs';
import path from 'node:path';
import { MAX_CONFIG_BYTES, readInputBytesSync } from '../runtime/bounded-input.js';

/** The JSON object in `file` (a package manifest), or null when it is missing, too large or not an object. */
export function readPackageJson(file: string): Record<string, unknown> | null {
  try {
    const text = readInputBytesSync(file, { what: 'package manifest', maxBytes: MAX_CONFIG_BYTES });
    const value: unknown = JSON.parse(text.toString('utf8'));
    return typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

/** `file`'s real path, or null when it does not resolve. */
export function realpathOrNull(file: string): string | null {
  try {
    return fs.realpathSync(file);
  } catch {
    return null;
  }
}

/** An installed package's file that an executable resolved to: its real path, the package's root and manifest. */
export interface InstalledPackageFile {
  /** The file's real path. */
  file: string;
  /** The package's directory. */
  root: string;
  /** Its `package.json`. */
  manifest: Record<string, unknown>;
}

/**
 * `executable`'s real path when it is `relative` (`bin/codex.js`, `/`-separated) inside a package named `packageName`,
 * with that package's root and manifest; null for anything else (a stand-in recognises only the layout it knows).
 */
export function installedPackageFile(
  executable: string,
  packageName: string,
  relative: string,
): InstalledPackageFile | null {
  const file = realpathOrNull(executable);
  if (!file) return null;
  let root = file;
  for (const part of relative.split('/').reverse()) {
    if (path.basename(root) !== part) return null;
    root = path.dirname(root);
  }
  const manifest = readPackageJson(path.join(root, 'package.json'));
  return manifest?.name === packageName ? { file, root, manifest } : null;
}
