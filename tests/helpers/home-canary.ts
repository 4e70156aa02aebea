/**
 * Canary files some engine tests plant in the real HOME (to prove an agent cannot read it), named one way so that a
 * test comparing the real HOME before and after an attempt can tell them from a leak while they come and go.
 */
import os from 'node:os';
import path from 'node:path';

/** The shape of a canary's name: `.ah-<what>-<12 hex>`. */
const HOME_CANARY_NAME = /^\.ah-[a-z-]+-[0-9a-f]{12}$/;

/** The path of a canary in the real HOME: `~/.ah-<what>-<tag>`, where `tag` is 12 hex digits (6 random bytes). */
export function homeCanaryPath(what: string, tag: string): string {
  const name = `.ah-${what}-${tag}`;
  if (!HOME_CANARY_NAME.test(name)) throw new Error(`not a home canary name: ${name}`);
  return path.join(os.homedir(), name);
}

/** True for a name in HOME that {@link homeCanaryPath} makes. */
export function isHomeCanary(name: string): boolean {
  return HOME_CANARY_NAME.test(name);
}
