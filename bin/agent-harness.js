#!/bin/sh
":" //; d=$AGENT_HARNESS_DAEMON; [ -n "$d" ] || case "$CI$CONTINUOUS_INTEGRATION$BUILD_NUMBER$TF_BUILD$CODEBUILD_BUILD_ID" in ""|[Ff][Aa][Ll][Ss][Ee]|0) d=on;; esac; case "$d" in [Oo][Nn]|1) command -v perl >/dev/null && exec perl -e 'my $f = $ARGV[0]; for (1 .. 40) { my $l = readlink $f; last unless defined $l; $f = $l =~ m{^/} ? $l : ($f =~ m{^(.*/)}s ? $1 : "") . $l } $f =~ s{[^/]*\z}{daemon-client.pl}; $f = "./$f" unless $f =~ m{^/}; do $f; AgentHarness::DaemonClient::main(@ARGV) if defined &AgentHarness::DaemonClient::main; exec { "node" } "node", @ARGV' -- "$0" "$@";; esac; exec node "$0" "$@"
// The two lines above are read by sh, which the command's link runs (npm links the bin): it starts Node on this file,
// as `#!/usr/bin/env node` would. To Node the second line is a string and a comment. With the daemon on
// (AGENT_HARNESS_DAEMON=on, or unset outside a CI job: CI_VARIABLES in bin/daemon-client.js, of which sh looks at
// the values together, roughly; the Perl client checks each) and a Perl, sh starts bin/daemon-client.pl instead
// (found beside this file, through the link): Perl starts in
// ~4 ms where Node takes 25-80, and a client of a running daemon is all an attempt command then needs; for anything
// else it becomes `node <this file> …` itself (issue 13). dash, Debian's sh, passes on the environment as it got it,
// but for a PWD it sets right and variables whose names are not a shell's (`A-B=1`), which it drops.
//
// Entry point of the `agent-harness` command. It runs the compiled dist/ whenever dist/ was built from exactly the
// sources in src/ (a published package has no src/; in a checkout `npm ci` builds dist/ through `prepare`), and
// the TypeScript sources through tsx otherwise, so an edit to src/ takes effect at once, with no rebuild.
//
// "Built from exactly these sources" is decided by a fingerprint, not by comparing dates: the build records the
// path, size and mtime of every file under src/ (and of the tsconfigs) in dist/.build-stamp, taken before tsc
// reads them; dist/ is used only when the same walk gives the same text now. An edit, a new, deleted or renamed
// file, a branch switch, or a file restored with an older mtime all change it; the walk stats ~200 entries (a few
// ms). AGENT_HARNESS_FROM_SOURCE=1 forces tsx (stack traces in .ts, a debugger on the sources).
//
// CommonJS, as is bin/bundle-loader.js (bin/package.json says so): a process whose entry point is an ES module
// starts Node's ES-module loader first, ~4 ms of every command; the bundle is CommonJS too, so a command from dist/
// never needs that loader. The sources (tsx) and the unbundled dist/ are ES modules, imported. The file keeps its
// `.js` name: npx keeps the bin links of a checkout it once ran, and a renamed bin is then "not found" there.
'use strict';
const { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } = require('node:fs');
const { dirname, join } = require('node:path');
const { pathToFileURL } = require('node:url');

const root = join(__dirname, '..');
const stampFile = join(root, 'dist', '.build-stamp');
const fingerprinted = ['tsconfig.json', 'tsconfig.build.json'];

/** One line per file under src/ and per tsconfig: path, size, mtime. Sorted, so equal trees give equal text. */
function sourceFingerprint() {
  const lines = [];
  const walk = (dir, rel) => {
    for (const entry of readdirSync(dir, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) {
      const file = join(dir, entry.name);
      if (entry.isDirectory()) walk(file, `${rel}${entry.name}/`);
      else lines.push(describe(file, `${rel}${entry.name}`));
    }
  };
  const describe = (file, rel) => {
    const stat = statSync(file);
    return `${rel} ${stat.size} ${stat.mtimeMs}`;
  };
  walk(join(root, 'src'), 'src/');
  for (const name of fingerprinted) if (existsSync(join(root, name))) lines.push(describe(join(root, name), name));
  return `${lines.join('\n')}\n`;
}

/** True when dist/ holds the build of the current src/ (see the fingerprint above). */
function distIsCurrent() {
  try {
    return readFileSync(stampFile, 'utf8') === sourceFingerprint();
  } catch {
    return false;
  }
}

/**
 * Builds dist/ with tsc and stamps it. `ifStale` skips the build when the stamp already matches (`npm pack` runs
 * prepack and then prepare); `lenient` (prepare, on `npm ci`) reports a failed or impossible build and exits 0,
 * since the bin then runs the sources through tsx and `npm test` type-checks anyway.
 */
async function buildDist({ ifStale = false, lenient = false } = {}) {
  if (ifStale && distIsCurrent()) return;
  const fail = (message) => {
    console.error(`agent-harness build: ${message}`);
    if (lenient) console.error('agent-harness build: dist/ is not stamped; the agent-harness command runs src/ through tsx (slower start).');
    process.exitCode = lenient ? 0 : 1;
  };
  let tsc;
  try {
    tsc = require.resolve('typescript/bin/tsc');
  } catch {
    return fail('typescript is not installed (dev dependencies omitted?); dist/ was not built.');
  }
  const fingerprint = sourceFingerprint();
  rmSync(stampFile, { force: true });
  // From scratch: tsc never deletes the output of a source that is gone, and `files` would pack it. (A command
  // that starts meanwhile finds no stamp and runs the sources.)
  rmSync(join(root, 'dist'), { recursive: true, force: true });
  // Loaded here, not at the top: every start of the command (`--version` first) would load child_process for nothing.
  const { spawnSync } = require('node:child_process');
  const result = spawnSync(process.execPath, [tsc, '-p', join(root, 'tsconfig.build.json')], { cwd: root, stdio: 'inherit' });
  if (result.status !== 0) return fail(`tsc -p tsconfig.build.json failed (${result.error?.message ?? `exit status ${result.status ?? result.signal}`}).`);
  await bundleCli();
  writeFileSync(stampFile, fingerprint);
}

/**
 * Bundles the command (dist/cli/main.js and what it imports, dependencies included) into one CommonJS file,
 * dist/bundle/main.cjs, which the bin runs through V8 with a code cache (bin/bundle-loader.js). Node resolves,
 * reads and compiles ~150 small ES modules per attempt otherwise (bench/RESULTS.md). The lazy imports stay lazy:
 * esbuild turns each dynamically imported module into a function run on its first import, so `--version`, `runs`
 * and `translate` still run no model server, PTY or attempt code. The library entry points (`exports`) stay
 * unbundled. Without esbuild (dev dependencies omitted) the command runs dist/cli/main.js, as before.
 */
async function bundleCli() {
  const outdir = join(root, 'dist', 'bundle');
  rmSync(outdir, { recursive: true, force: true });
  let esbuild;
  try {
    esbuild = require('esbuild');
  } catch {
    console.error('agent-harness build: esbuild is not installed; the command runs the unbundled dist/ (slower start).');
    return;
  }
  const outfile = join(outdir, 'main.cjs');
  const { outputFiles } = await esbuild.build({
    entryPoints: [join(root, 'dist', 'cli', 'main.js')],
    outfile,
    write: false,
    bundle: true,
    format: 'cjs',
    platform: 'node',
    target: 'node20',
    minifyWhitespace: true,
    minifySyntax: true,
    keepNames: true,
    // The native PTY module loads its prebuilt binary relative to its own files. It is CommonJS: its `import()`
    // becomes a require(), so the bundle needs no ES-module loader of its own (bin/bundle-loader.js).
    external: ['@lydell/node-pty'],
    supported: { 'dynamic-import': false },
    // The bundle's one `import.meta.url` (the package root is found from it) is the bundle's own URL, which the
    // loader passes in.
    define: { 'import.meta.url': '__agentHarnessBundleUrl' },
    // zod's `locales` export (every language's error messages, half of zod's size) is never used: only the
    // English messages zod configures by default are bundled.
    plugins: [{
      name: 'zod-without-locales',
      setup(build) {
        build.onResolve({ filter: /^\.\.\/locales\/index\.js$/ }, (args) => (args.importer.includes(`${join('node_modules', 'zod')}`) ? { path: 'zod-locales', namespace: 'agent-harness-empty' } : undefined));
        build.onLoad({ filter: /.*/, namespace: 'agent-harness-empty' }, () => ({ contents: 'export {};', loader: 'js' }));
      },
    }, {
      // signal-exit 3 (proper-lockfile's, loaded by every `start` before its engine runs) requires Node's `assert`
      // for one `assert.equal` on its argument; loading `assert` costs ~3 ms of a command's start. It gets that one
      // function instead, which throws as assert.equal does.
      name: 'signal-exit-without-assert',
      setup(build) {
        build.onResolve({ filter: /^assert$/ }, (args) => (args.importer.includes(`${join('node_modules', 'signal-exit')}`) ? { path: 'assert-equal', namespace: 'agent-harness-assert' } : undefined));
        build.onLoad({ filter: /.*/, namespace: 'agent-harness-assert' }, () => ({
          contents: "module.exports = { equal(actual, expected, message) { if (actual != expected) throw Object.assign(new Error(message), { name: 'AssertionError', code: 'ERR_ASSERTION', actual, expected, operator: '==' }); } };",
          loader: 'js',
        }));
      },
    }],
    logLevel: 'warning',
  });
  mkdirSync(outdir, { recursive: true });
  writeFileSync(outfile, shareBuiltinWrappers(outputFiles.find((file) => file.path === outfile).text));
  // The code caches the command writes beside the bundle are this machine's: never packed.
  writeFileSync(join(outdir, '.npmignore'), 'compile-cache/\n');
}

/**
 * Every module of the bundle that imports a Node built-in gets, from esbuild, its own copy of the built-in's
 * exports (`__toESM(require("node:fs"))`: a getter per export, ~100 for `fs`). ~100 such copies cost ~7 ms of each
 * start. They are all alike, read-only views of the same module, so the bundle makes one per built-in and shares it.
 */
function shareBuiltinWrappers(code) {
  const prologue = '"use strict";';
  if (!code.startsWith(prologue) || !code.includes('var __toESM=')) return code;
  const shared = 'var __agentHarnessBuiltins=new Map,__toESMBuiltin=(mod,isNodeMode)=>{let key=isNodeMode?1:0,views=__agentHarnessBuiltins.get(mod);return views||__agentHarnessBuiltins.set(mod,views=[]),views[key]??=__toESM(mod,isNodeMode)};';
  return `${prologue}${shared}${code.slice(prologue.length).replaceAll('__toESM(require("node:', '__toESMBuiltin(require("node:')}`;
}

/**
 * `agent-harness --version` (or `-V`) alone is answered here, from package.json, before the source check and before
 * any of the command is loaded: the same line commander prints, in a third of the time (issue 13: ≤ 100 ms).
 * Returns false for anything else.
 */
function printVersionFast(args) {
  if (args.length !== 1 || (args[0] !== '--version' && args[0] !== '-V')) return false;
  let version;
  try {
    version = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).version;
  } catch {
    return false; // the command reports it its own way
  }
  if (typeof version !== 'string') return false;
  process.stdout.write(`${version}\n`);
  return true;
}

/**
 * With the daemon on (AGENT_HARNESS_DAEMON=on, or unset outside a CI job), runs an attempt command (start, resume,
 * the direct <engine> form) in the daemon of this environment and build (bin/daemon-client.js) and resolves its exit
 * status; `status` null when the command runs here: the daemon is off, the command is another, no daemon could take
 * it, or (on by default) none was listening yet, when `startDaemon` starts one for the next commands. A bad setting
 * is reported as the command reports errors (exit status 2).
 */
async function runInDaemon(codeFile) {
  const here = { status: null, startDaemon: null };
  const args = process.argv.slice(2);
  // Built-ins it needs only once it talks to a daemon (node:net, node:child_process) load then.
  const daemon = require('./daemon-client.js');
  try {
    // Only an attempt command reads the settings: `doctor` reports a bad one instead of failing on it.
    if (!daemon.runsInDaemon(args) || !daemon.daemonEnabled()) return here;
    daemon.daemonIdleMs();
  } catch (error) {
    if (!(error instanceof daemon.DaemonSettingError)) throw error;
    process.stderr.write(`agent-harness: error ${error.code}: ${error.message}\n  hint: ${daemon.HINTS[error.code]}\n`);
    return { status: 2, startDaemon: null };
  }
  return daemon.runThroughDaemon({ args, bin: __filename, codeId: daemon.fileStamp(codeFile()) });
}

/** Runs the CLI in this process: from dist/ or, in a checkout whose dist/ is missing or stale, from src/ through tsx. */
async function runHere(bundle) {
  const source = join(root, 'src', 'cli', 'main.ts');
  const fromSource = existsSync(source) && (process.env.AGENT_HARNESS_FROM_SOURCE === '1' || !distIsCurrent());
  let cli;
  if (fromSource) {
    const { tsImport } = await import('tsx/esm/api');
    cli = await tsImport(pathToFileURL(source).href, pathToFileURL(__filename).href);
  } else {
    if (existsSync(bundle)) {
      const { cacheDirFor, cacheKey, loadBundle } = require('./bundle-loader.js');
      const loaded = loadBundle(bundle, { cacheDir: cacheDirFor(bundle), key: cacheKey(process.argv.slice(2)) });
      process.exitCode = await loaded.exports.runCli(process.argv.slice(2));
      loaded.saveCache();
      return;
    }
    cli = await import(pathToFileURL(join(root, 'dist', 'cli', 'main.js')).href);
  }
  process.exitCode = await cli.runCli(process.argv.slice(2));
}

/** Runs the command: `--version` at once, an attempt command in its daemon when there is one, the rest here. */
async function main() {
  if (printVersionFast(process.argv.slice(2))) return;
  // Node 22.1+ keeps the compiled modules of the sources and of the unbundled dist/ between runs (in its cache dir
  // under the OS temp dir); the bundle has its own code cache, on every Node (bin/bundle-loader.js).
  require('node:module').enableCompileCache?.();
  // A daemon is named after the build it was started from (the bundle, else the unbundled entry point; the Perl
  // client names the same file); whether the sources changed since is its own check.
  const bundle = join(root, 'dist', 'bundle', 'main.cjs');
  const viaDaemon = await runInDaemon(() => (existsSync(bundle) ? bundle : join(root, 'dist', 'cli', 'main.js')));
  if (viaDaemon.status !== null) {
    process.exitCode = viaDaemon.status;
    return;
  }
  await runHere(bundle);
  // No daemon was listening: this command ran its attempt itself, and the next ones get a daemon (not after a usage
  // error: nothing ran).
  if (viaDaemon.startDaemon && process.exitCode !== 2) await viaDaemon.startDaemon();
}

module.exports = { buildDist, sourceFingerprint };

// Run by node (npx runs it through a symlink, which Node resolves), not required by the build scripts.
if (require.main === module) {
  main().catch((error) => {
    process.exitCode = 1;
    console.error(error);
  });
}
