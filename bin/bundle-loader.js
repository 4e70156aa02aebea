// Loads the command's bundle (dist/bundle/main.cjs, one CommonJS file) through V8 with a code cache, so a start
// of the command does not compile the same ~1 MB of JavaScript again (issue 13: about 55 ms of a CLI attempt on the
// 2-core machine; Node 20 has no compile cache of its own, and Node 22's does not cover code run through `vm`).
//
// The cache is V8's own (`vm.Script` `cachedData` / `createCachedData`). V8 checks its version and flags, but of the
// source only the length: a cache made for other code of the same length is accepted and runs that other code. So
// the cache file is named by the SHA-256 of the bundle's bytes, and never read for other bytes. It is written after
// a command finishes (then it holds the functions the command compiled, not only the top level), one per command
// (`start.codex`, `runs`, `translate`, …), atomically (a temp file renamed), and only where none was accepted.
// Whoever can write it can already write the bundle beside it. Any failure to read or write it only costs the time
// it would have saved: the command runs the same.
import { createHash } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { basename, dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import vm from 'node:vm';

/** Environment variable: `off` disables the code cache; a directory puts it there instead of beside the bundle. */
export const COMPILE_CACHE_ENV = 'AGENT_HARNESS_COMPILE_CACHE';

/**
 * The cache's name for a command line: its command word, and for `start` the engine (the code an attempt runs
 * differs by engine). Only lower-case words are used, so no argument can name a path.
 */
export function cacheKey(args) {
  const word = (value) => (typeof value === 'string' && /^[a-z][a-z0-9-]{0,31}$/.test(value) ? value : null);
  const command = word(args[0]);
  if (command === null) return 'main';
  const engine = command === 'start' ? word(args[1]) : null;
  return engine === null ? command : `${command}.${engine}`;
}

/** Where the cache goes: `AGENT_HARNESS_COMPILE_CACHE` (a directory, or `off`: null), else beside the bundle. */
export function cacheDirFor(bundleFile, env = process.env) {
  const setting = env[COMPILE_CACHE_ENV]?.trim();
  if (setting === 'off' || setting === '0') return null;
  return setting ? setting : join(dirname(bundleFile), 'compile-cache');
}

/**
 * Runs the CommonJS bundle `file` and returns its exports, with `cache` telling what became of the code cache
 * (`none`: there was none; `accepted`; `rejected`: V8 refused it, e.g. another Node; `off`) and `saveCache()` to
 * call once the command is done: it writes the cache where none was accepted and removes the caches of other
 * builds of the bundle. It never throws.
 */
export function loadBundle(file, { cacheDir, key }) {
  const bytes = readFileSync(file);
  const hash = createHash('sha256').update(bytes).digest('hex').slice(0, 16);
  const stem = `${basename(file)}-${hash}-`;
  const cacheFile = cacheDir === null ? null : join(cacheDir, `${stem}${process.version}-${process.arch}-${key}.cache`);
  let cachedData;
  if (cacheFile !== null) {
    try {
      cachedData = readFileSync(cacheFile);
    } catch {
      cachedData = undefined;
    }
  }
  // The wrapper opens on a line of its own, and `lineOffset` takes it back: stack traces give the bundle's lines.
  const script = new vm.Script(`(function (exports, require, module, __filename, __dirname, __agentHarnessBundleUrl) {\n${bytes.toString('utf8')}\n})`, {
    filename: file,
    lineOffset: -1,
    ...(cachedData ? { cachedData } : {}),
    // `import()` in the bundle (of the native PTY module, left outside it) resolves as in any module of the process.
    importModuleDynamically: vm.constants.USE_MAIN_CONTEXT_DEFAULT_LOADER,
  });
  const cache = cacheFile === null ? 'off' : cachedData === undefined ? 'none' : script.cachedDataRejected ? 'rejected' : 'accepted';
  const module = { exports: {} };
  script.runInThisContext()(module.exports, createRequire(file), module, file, dirname(file), pathToFileURL(file).href);
  const saveCache = () => {
    if (cacheFile === null || cache === 'accepted') return;
    const temp = `${cacheFile}.${process.pid}.tmp`;
    try {
      const data = script.createCachedData();
      mkdirSync(cacheDir, { recursive: true });
      writeFileSync(temp, data);
      renameSync(temp, cacheFile);
      for (const name of readdirSync(cacheDir)) {
        if (name.startsWith(`${basename(file)}-`) && !name.startsWith(stem) && name.endsWith('.cache')) rmSync(join(cacheDir, name), { force: true });
      }
    } catch {
      // A read-only install or a full disk: the next start compiles, as it would without a cache.
      try {
        rmSync(temp, { force: true });
      } catch {
        // Nothing was written there.
      }
    }
  };
  return { exports: module.exports, cache, saveCache };
}
