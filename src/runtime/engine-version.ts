/**
 * The version of the engine CLI an attempt ran, read from the npm package that ships the executable (no extra
 * process: asking `<engine> --version` would cost a CLI start per attempt). Comparing releases is what the
 * conformance and consistency reports are for, so each attempt records it.
 */
import fs from 'node:fs';
import path from 'node:path';
import { MAX_CONFIG_BYTES, readInputBytesSync } from './bounded-input.js';

const cache = new Map<string, string | null>();

/**
 * Walks up from the executable's real path to the `package.json` named `packageName` and returns its version;
 * null when the executable is not from that package (a binary on PATH, a fake in tests).
 */
export function engineVersion(executable: string, packageName: string | null): string | null {
  if (!packageName) return null;
  const key = `${executable}\u0000${packageName}`;
  if (cache.has(key)) return cache.get(key)!;
  let version: string | null = null;
  try {
    let dir = path.dirname(fs.realpathSync(executable));
    for (let depth = 0; depth < 8 && version === null; depth += 1) {
      const manifest = path.join(dir, 'package.json');
      if (fs.existsSync(manifest)) {
        // The managed prefix is writable by the agent: a FIFO planted there is refused (thrown), never waited on.
        const text = readInputBytesSync(manifest, { what: 'package manifest', maxBytes: MAX_CONFIG_BYTES });
        const parsed = JSON.parse(text.toString('utf8')) as { name?: unknown; version?: unknown };
        if (parsed.name === packageName && typeof parsed.version === 'string') version = parsed.version;
      }
      const parent = path.dirname(dir);
      if (parent === dir) break;
      dir = parent;
    }
  } catch {
    version = null;
  }
  cache.set(key, version);
  return version;
}
