/**
 * The versions agent-harness is tested with: the engine CLIs and ACP adapters are pinned as its devDependencies
 * (package.json, which npm publishes with the package), so an install hint names the same version, never a guess.
 */
import fs from 'node:fs';
import path from 'node:path';
import { PACKAGE_ROOT } from './executables.js';

let pins: Record<string, string> | null = null;

/** agent-harness's devDependencies (read once; empty when its package.json cannot be read). */
function pinned(): Record<string, string> {
  if (pins) return pins;
  try {
    const manifest = JSON.parse(fs.readFileSync(path.join(PACKAGE_ROOT, 'package.json'), 'utf8')) as {
      devDependencies?: Record<string, string>;
    };
    pins = manifest.devDependencies ?? {};
  } catch {
    pins = {};
  }
  return pins;
}

/** The version (or range) of `packageName` agent-harness pins, or null when it pins none. */
export function pinnedVersion(packageName: string): string | null {
  return pinned()[packageName] ?? null;
}

/** `npm i -D <package>@<pinned version>` (no version when agent-harness pins none). */
export function installCommand(packageName: string, checkedVersion?: string): string {
  // A package this checkout does not pin (qwen: not in the lock file) falls back to the version its adapter names.
  const version =
    pinnedVersion(packageName) ?? (checkedVersion && /^\d+\.\d+\.\d+$/.test(checkedVersion) ? checkedVersion : null);
  return `npm i -D ${packageName}${version ? `@${version}` : ''}`;
}
