/**
 * Copilot's V8 compile cache, warmed once on the host and given to each attempt as a copy.
 *
 * copilot 1.0.102's `index.js` calls `module.enableCompileCache()`, whose cache is `$TMPDIR/node-compile-cache`. Each
 * attempt has a TMPDIR of its own, so every start compiled the 8 MB `cli-main.js` from scratch and wrote a fresh
 * 2.4 MB cache that the next attempt never saw: about a third of copilot's start-up CPU. The harness runs the binary
 * once on the host (`copilot help config`, which loads the same modules as a prompt and touches nothing but a scratch
 * HOME), keeps the `node-compile-cache` it wrote under its own agent cache, and copies it into each attempt's TMPDIR.
 * Node checks every entry against the source's hash and V8's version and flags, and rewrites a rejected one in that
 * TMPDIR only: an attempt gets a copy, never the harness's files, so nothing an agent writes reaches another attempt.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

/** The directory Node's compile cache takes in `os.tmpdir()` when `enableCompileCache()` names none. */
export const NODE_COMPILE_CACHE_DIR = 'node-compile-cache';

/** How long the one-time warm-up may take (ms): far above the 1-3 s it takes on a loaded machine. */
const WARM_TIMEOUT_MS = 120_000;

/** True when `seed` holds a warmed compile cache (a directory per V8 version, each with entries). */
function warmed(seed: string): boolean {
  try {
    const root = path.join(seed, NODE_COMPILE_CACHE_DIR);
    return fs.readdirSync(root).some((version) => fs.readdirSync(path.join(root, version)).length > 0);
  } catch {
    return false;
  }
}

/**
 * The TMPDIR seed for copilot `binary` (its package unpacked under `cacheHome`): `seed`, a directory holding
 * `node-compile-cache/`, warmed now when missing; null when the warm-up wrote nothing (copilot then compiles at each
 * start, as before). Concurrent warm-ups each write a scratch directory of their own; the first rename wins.
 */
export function copilotCompileCacheSeed(binary: string, cacheHome: string, seed: string): string | null {
  if (warmed(seed)) return seed;
  let scratch: string | null = null;
  try {
    scratch = fs.mkdtempSync(path.join(cacheHome, '.warm-'));
    const home = path.join(scratch, 'home');
    const tmp = path.join(scratch, 'tmp');
    const built = path.join(scratch, 'seed');
    for (const dir of [home, tmp, built]) fs.mkdirSync(dir);
    execFileSync(binary, ['help', 'config'], {
      cwd: home,
      env: {
        PATH: process.env.PATH ?? '/usr/bin:/bin',
        HOME: home,
        TMPDIR: tmp,
        COPILOT_HOME: path.join(home, '.copilot'),
        COPILOT_OFFLINE: 'true',
        COPILOT_AUTO_UPDATE: 'false',
        COPILOT_PKG_CACHE_HOME: cacheHome,
      },
      stdio: 'ignore',
      timeout: WARM_TIMEOUT_MS,
    });
    // Only the compile cache is kept: whatever else the warm-up left in its TMPDIR is its own.
    if (!warmed(tmp)) return null;
    fs.renameSync(path.join(tmp, NODE_COMPILE_CACHE_DIR), path.join(built, NODE_COMPILE_CACHE_DIR));
    fs.mkdirSync(path.dirname(seed), { recursive: true });
    try {
      fs.renameSync(built, seed);
    } catch {
      // Another process's warm-up got there first; its seed is as good.
    }
    return warmed(seed) ? seed : null;
  } catch {
    return null;
  } finally {
    if (scratch) fs.rmSync(scratch, { recursive: true, force: true });
  }
}
