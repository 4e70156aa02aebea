/**
 * Reading an installed npm package's files for a native launch (codex's and copilot's `native-launch.ts`): its
 * manifest, bounded, and real paths; a file that is missing or unreadable is null, never an error.
 */
import fs from 'node:fs';
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
