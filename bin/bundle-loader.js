// Loads the command's bundle (dist/bundle/main.cjs, one CommonJS file) through V8 with a code cache, so a start
// of the command does not compile the same ~1 MB of JavaScript again (issue 13: 45–75 ms of a CLI attempt on the
// 2-core machine; Node 20 has no compile cache of its own, and Node 22's does not cover code run through `vm`).
//
// The cache is V8's own (`vm.Script` `cachedData` / `createCachedData`). V8 checks its version and flags, but of the
// source only the length: a cache made for other code of the same length is accepted and runs that other code. So
// the cache file is named by the SHA-256 of the bundle's bytes, and never read for other bytes. It is written after
// a command finishes (then it holds the functions the command compiled, not only the top level), one per command
// (`start.codex`, `runs`, `translate`, …), atomically (a temp file renamed), and only where none was accepted.
// Whoever can write it can already write the bundle beside it. Any failure to read or write it only costs the time
// it would have saved: the command runs the same.
//
// `translate` is the exception: it streams inputs of any size, and a bundle run as a `vm.Script` grew its heap with
// the input (peak RSS 70 MiB at 100 MiB of input, 86 at 200; the same code compiled as a CommonJS module stays at
// 70). It is compiled as Node compiles a module (`vm.compileFunction`), with the cache V8 makes as it compiles.
//
// CommonJS, like the bin that loads it: a process whose entry point is CommonJS never starts Node's ES-module loader.
'use strict';
const { createHash } = require('node:crypto');
const { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } = require('node:fs');
const { createRequire } = require('node:module');
const { basename, dirname, join } = require('node:path');
const { pathToFileURL } = require('node:url');
const vm = require('node:vm');

/** Environment variable: `off` disables the code cache; a directory puts it there instead of beside the bundle. */
const COMPILE_CACHE_ENV = 'AGENT_HARNESS_COMPILE_CACHE';

/**
 * The cache's name for a command line: its command word, and for `start` the engine (the code an attempt runs
 * differs by engine). Only lower-case words are used, so no argument can name a path.
 */
function cacheKey(args) {
  const word = (value) => (typeof value === 'string' && /^[a-z][a-z0-9-]{0,31}$/.test(value) ? value : null);
  const command = word(args[0]);
  if (command === null) return 'main';
  const engine = command === 'start' ? word(args[1]) : null;
  return engine === null ? command : `${command}.${engine}`;
}

/** Where the cache goes: `AGENT_HARNESS_COMPILE_CACHE` (a directory, or `off`: null), else beside the bundle. */
function cacheDirFor(bundleFile, env = process.env) {
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
function loadBundle(file, { cacheDir, key }) {
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
  if (key === 'translate') return loadAsModule(file, bytes, cacheFile, cachedData, stem);
  // The bundle has no `import()` (the build turns its one, of the CommonJS PTY module, into a require()).
  // The wrapper opens on a line of its own, and `lineOffset` takes it back: stack traces give the bundle's lines.
  const script = new vm.Script(`(function (exports, require, module, __filename, __dirname, __agentHarnessBundleUrl) {\n${bytes.toString('utf8')}\n})`, {
    filename: file,
    lineOffset: -1,
    ...(cachedData ? { cachedData } : {}),
  });
  const cache = cacheFile === null ? 'off' : cachedData === undefined ? 'none' : script.cachedDataRejected ? 'rejected' : 'accepted';
  const module = { exports: {} };
  script.runInThisContext()(module.exports, createRequire(file), module, file, dirname(file), pathToFileURL(file).href);
  const saveCache = () => {
    if (cache === 'none' || cache === 'rejected') writeCache(cacheFile, file, stem, () => script.createCachedData());
  };
  return { exports: module.exports, cache, saveCache };
}

/** The bundle's free variables as a module's: those of CommonJS, and its own URL (its one `import.meta.url`). */
const PARAMETERS = ['exports', 'require', 'module', '__filename', '__dirname', '__agentHarnessBundleUrl'];

/** {@link loadBundle} for `translate`: compiled as a CommonJS module, its cache made by V8 as it compiles. */
function loadAsModule(file, bytes, cacheFile, cachedData, stem) {
  const source = bytes.toString('utf8');
  const compile = (options) => vm.compileFunction(source, PARAMETERS, { filename: file, ...options });
  const run = compile(cachedData ? { cachedData } : cacheFile === null ? {} : { produceCachedData: true });
  const cache = cacheFile === null ? 'off' : cachedData === undefined ? 'none' : run.cachedDataRejected ? 'rejected' : 'accepted';
  const module = { exports: {} };
  run.call(module.exports, module.exports, createRequire(file), module, file, dirname(file), pathToFileURL(file).href);
  const saveCache = () => {
    // A rejected cache is replaced: compiled again, once, after the command.
    if (cache === 'none') writeCache(cacheFile, file, stem, () => run.cachedData);
    if (cache === 'rejected') writeCache(cacheFile, file, stem, () => compile({ produceCachedData: true }).cachedData);
  };
  return { exports: module.exports, cache, saveCache };
}

/** Writes `data()` to `cacheFile` atomically and removes the caches of other builds beside it; never throws. */
function writeCache(cacheFile, bundleFile, stem, data) {
  const temp = `${cacheFile}.${process.pid}.tmp`;
  const dir = dirname(cacheFile);
  const bundleName = `${basename(bundleFile)}-`;
  try {
    const bytes = data();
    if (!bytes) return;
    mkdirSync(dir, { recursive: true });
    writeFileSync(temp, bytes);
    renameSync(temp, cacheFile);
    for (const name of readdirSync(dir)) {
      if (name.startsWith(bundleName) && !name.startsWith(stem) && name.endsWith('.cache')) rmSync(join(dir, name), { force: true });
    }
  } catch {
    // A read-only install or a full disk: the next start compiles, as it would without a cache.
    try {
      rmSync(temp, { force: true });
    } catch {
      // Nothing was written there.
    }
  }
}

module.exports = { COMPILE_CACHE_ENV, cacheKey, cacheDirFor, loadBundle };
