/**
 * The command's bundle runs through V8 with a code cache (bin/bundle-loader.js, issue 13). A cache is only ever
 * used for the exact bytes it was made from: V8 itself checks a cached script's length, not its content, and would
 * run the old code of another bundle of the same length. A missing, corrupt or unwritable cache costs time, never
 * correctness.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import vm from 'node:vm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { COMPILE_CACHE_ENV, cacheDirFor, cacheKey, loadBundle } from '../../bin/bundle-loader.js';
import { BIN, REPO } from '../helpers/cli.js';

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'ah-bundle-loader-'));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

let counter = 0;
/** A fresh directory with a CommonJS "bundle" whose `value()` returns `value`. */
function bundleReturning(value: string): { file: string; cacheDir: string } {
  const dir = path.join(tmp, `case-${(counter += 1)}`);
  fs.mkdirSync(dir);
  const file = path.join(dir, 'main.cjs');
  fs.writeFileSync(file, `"use strict";\nconst VALUE = ${JSON.stringify(value)};\nexports.value = function value() { return VALUE; };\nexports.url = __agentHarnessBundleUrl;\nexports.fail = function fail() {\n  throw new Error('from the bundle');\n};\n`);
  return { file, cacheDir: path.join(dir, 'compile-cache') };
}

const cacheFiles = (dir: string): string[] => (fs.existsSync(dir) ? fs.readdirSync(dir).sort() : []);
const call = (exports: Record<string, unknown>, name: string): unknown => (exports[name] as () => unknown)();
const LOADER_URL = new URL('../../bin/bundle-loader.js', import.meta.url).href;

/**
 * Loads the bundle as the bin does, in a process of its own (V8 keeps what a process compiled and would not even
 * look at a code cache for source it has seen), calls `value()`, then saves the cache. Returns what it saw.
 */
function loadInChild(file: string, cacheDir: string, key = 'runs'): { cache: string; value: string } {
  const script = `import { loadBundle } from ${JSON.stringify(LOADER_URL)};
const loaded = loadBundle(${JSON.stringify(file)}, { cacheDir: ${JSON.stringify(cacheDir)}, key: ${JSON.stringify(key)} });
const value = loaded.exports.value();
loaded.saveCache();
process.stdout.write(JSON.stringify({ cache: loaded.cache, value }));`;
  const result = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' });
  expect(result.status, result.stderr).toBe(0);
  return JSON.parse(result.stdout) as { cache: string; value: string };
}

describe('the code cache of the command bundle', () => {
  // `translate` compiles the bundle as a CommonJS module (vm.compileFunction); the others as a vm.Script.
  it.each(['runs', 'translate'])('is written once the command is done, then accepted by the next start (%s)', (key) => {
    const { file, cacheDir } = bundleReturning('A');
    expect(loadInChild(file, cacheDir, key)).toEqual({ cache: 'none', value: 'A' });
    const [name] = cacheFiles(cacheDir);
    expect(name).toMatch(new RegExp(`^main\\.cjs-[0-9a-f]{16}-${process.version.replace(/\./g, '\\.')}-${process.arch}-${key}\\.cache$`));
    const inode = fs.statSync(path.join(cacheDir, name!)).ino;
    expect(loadInChild(file, cacheDir, key)).toEqual({ cache: 'accepted', value: 'A' });
    // An accepted cache is not written again.
    expect(cacheFiles(cacheDir)).toEqual([name]);
    expect(fs.statSync(path.join(cacheDir, name!)).ino).toBe(inode);
  });

  it('is never used for other bytes of the same length, which V8 alone would accept', () => {
    const { file, cacheDir } = bundleReturning('A');
    loadInChild(file, cacheDir); // value() ran, so its compiled code is in the cache
    const [cacheOfA] = cacheFiles(cacheDir);
    const textA = fs.readFileSync(file, 'utf8');
    const textB = textA.replace('"A"', '"B"');
    expect(textB.length).toBe(textA.length);

    // What the loader guards against: V8 accepts A's cache for B and runs A's function.
    const wrap = (text: string) => `(function (exports, require, module, __filename, __dirname, __agentHarnessBundleUrl) {\n${text}\n})`;
    const naive = new vm.Script(wrap(textB), { filename: file, cachedData: fs.readFileSync(path.join(cacheDir, cacheOfA!)) });
    const naiveExports: Record<string, unknown> = {};
    (naive.runInThisContext() as (...args: unknown[]) => void)(naiveExports, createRequire(file), {}, file, path.dirname(file), '');
    expect(naive.cachedDataRejected).toBe(false);
    expect(call(naiveExports, 'value')).toBe('A');

    fs.writeFileSync(file, textB);
    expect(loadInChild(file, cacheDir)).toEqual({ cache: 'none', value: 'B' });
    // The cache of the old build is removed; the new one is B's.
    const after = cacheFiles(cacheDir);
    expect(after).toHaveLength(1);
    expect(after[0]).not.toBe(cacheOfA);
    expect(loadInChild(file, cacheDir)).toEqual({ cache: 'accepted', value: 'B' });
  });

  it('keeps one cache per command, each accepted for its own command', () => {
    const { file, cacheDir } = bundleReturning('A');
    for (const key of ['runs', 'start.codex']) loadInChild(file, cacheDir, key);
    expect(cacheFiles(cacheDir).map((name) => name.replace(/^.*-/, ''))).toEqual(['runs.cache', 'start.codex.cache']);
    expect(loadInChild(file, cacheDir, 'start.codex').cache).toBe('accepted');
    expect(loadInChild(file, cacheDir, 'translate').cache).toBe('none');
  });

  it.each(['runs', 'translate'])('runs the bundle when the cache is corrupt, and replaces the cache (%s)', (key) => {
    const { file, cacheDir } = bundleReturning('A');
    loadInChild(file, cacheDir, key);
    const cacheFile = path.join(cacheDir, cacheFiles(cacheDir)[0]!);
    const bytes = fs.readFileSync(cacheFile);
    for (const broken of [bytes.subarray(0, bytes.length >> 1), Buffer.alloc(bytes.length, 0x5a), Buffer.alloc(0)]) {
      fs.writeFileSync(cacheFile, broken);
      expect(loadInChild(file, cacheDir, key)).toEqual({ cache: 'rejected', value: 'A' });
      expect(fs.readFileSync(cacheFile).equals(broken)).toBe(false);
      expect(loadInChild(file, cacheDir, key)).toEqual({ cache: 'accepted', value: 'A' });
    }
  });

  it('costs nothing but time when the cache cannot be written', () => {
    const { file, cacheDir } = bundleReturning('A');
    fs.writeFileSync(cacheDir, 'a file where the cache directory would go');
    const loaded = loadBundle(file, { cacheDir, key: 'runs' });
    expect(call(loaded.exports, 'value')).toBe('A');
    expect(() => loaded.saveCache()).not.toThrow();
    expect(fs.readdirSync(path.dirname(file)).sort()).toEqual(['compile-cache', 'main.cjs']);
  });

  it.each(['runs', 'translate'])('gives stack traces with the bundle file and its own line numbers (%s)', (key) => {
    const { file, cacheDir } = bundleReturning('A');
    const loaded = loadBundle(file, { cacheDir, key });
    expect(() => call(loaded.exports, 'fail')).toThrow(expect.objectContaining({ stack: expect.stringContaining(`${file}:6:`) }));
  });

  it(`is off with ${COMPILE_CACHE_ENV}=off, elsewhere when it names a directory`, () => {
    const bundle = path.join(tmp, 'pkg', 'dist', 'bundle', 'main.cjs');
    expect(cacheDirFor(bundle, {})).toBe(path.join(tmp, 'pkg', 'dist', 'bundle', 'compile-cache'));
    expect(cacheDirFor(bundle, { [COMPILE_CACHE_ENV]: 'off' })).toBeNull();
    expect(cacheDirFor(bundle, { [COMPILE_CACHE_ENV]: '/var/cache/ah' })).toBe('/var/cache/ah');
    const { file } = bundleReturning('A');
    const off = loadBundle(file, { cacheDir: null, key: 'runs' });
    expect(off.cache).toBe('off');
    off.saveCache();
    expect(fs.readdirSync(path.dirname(file))).toEqual(['main.cjs']);
  });

  it('is named by the command word (and the engine of start), never by a path in the arguments', () => {
    expect(cacheKey(['start', 'codex', 'exec', '--json'])).toBe('start.codex');
    expect(cacheKey(['runs', '--json'])).toBe('runs');
    expect(cacheKey(['translate', '--engine', 'codex'])).toBe('translate');
    expect(cacheKey(['--help'])).toBe('main');
    expect(cacheKey([])).toBe('main');
    expect(cacheKey(['start', '../../etc/passwd'])).toBe('start');
    expect(cacheKey(['../x'])).toBe('main');
    expect(cacheKey(['resume', 'abcd1234'])).toBe('resume');
  });
});

describe('the command through its bundle', () => {
  beforeAll(() => {
    // The bin's own build, as the example-project tests do: skipped when dist/ is the build of the current src/.
    spawnSync(process.execPath, ['-e', "require('./bin/agent-harness.js').buildDist({ ifStale: true })"], { cwd: REPO, stdio: 'pipe' });
  }, 180_000);

  it('writes its cache on the first run and runs from it on the next, with the same output', () => {
    const bundle = path.join(REPO, 'dist', 'bundle', 'main.cjs');
    expect(fs.existsSync(bundle), 'npm run build makes dist/bundle/main.cjs').toBe(true);
    const cacheDir = path.join(tmp, 'cli-cache');
    const project = path.join(tmp, 'cli-project');
    fs.mkdirSync(project);
    fs.writeFileSync(path.join(project, 'package.json'), '{"name":"p","private":true}\n');
    const run = () => spawnSync(process.execPath, [BIN, 'runs', '--json'], {
      cwd: project,
      env: { PATH: process.env.PATH, HOME: path.join(tmp, 'home'), [COMPILE_CACHE_ENV]: cacheDir },
      encoding: 'utf8',
    });
    const first = run();
    expect(first.status, first.stderr).toBe(0);
    const [name] = cacheFiles(cacheDir);
    expect(name).toMatch(/^main\.cjs-[0-9a-f]{16}-.*-runs\.cache$/);
    const inode = fs.statSync(path.join(cacheDir, name!)).ino;
    const second = run();
    expect(second.status, second.stderr).toBe(0);
    expect(second.stdout).toBe(first.stdout);
    // Accepted, so not written again (a rejected cache would be replaced by a new file).
    expect(cacheFiles(cacheDir)).toEqual([name]);
    expect(fs.statSync(path.join(cacheDir, name!)).ino).toBe(inode);
  });
});
