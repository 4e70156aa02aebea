// Builds dist/ from src/ with tsc (tsconfig.build.json), then bundles the command into one file.
//   node scripts/build.mjs           incremental: only what changed is compiled again, nothing when dist/ is newer than
//                                    every input (prepare, the tests' setup)
//   node scripts/build.mjs --clean   dist/ from scratch (npm run build, prepack), so nothing of a deleted source is packed
//
// The bundle (dist/bundle/cli.mjs and its chunks, esbuild, no plugins) is what the bin runs: a fresh process then
// reads and compiles a few files instead of ~230 modules, and a command's lazy imports stay in chunks it loads only
// when it runs them. The
// library entry points (package.json `exports`) stay unbundled. Without esbuild (dev dependencies omitted) there is
// no bundle, and the bin runs dist/cli/main.js.
//
// The HTML report's page script is TypeScript in src/report/browser/ (tsconfig.browser.json, not compiled into dist/
// by tsc): between tsc and the bundle, the build compiles it into one classic script and writes it into
// dist/report/html-page-script.js, which then holds the text (run from the sources, that module compiles it itself).
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = path.join(path.dirname(fileURLToPath(import.meta.url)), '..');
// Inside dist/, so that it goes with what it describes (a checkout's own; never packed: package.json `files`).
const buildInfo = path.join(root, 'dist', '.tsbuildinfo');
// Touched when a build has finished whole (tsc, the page script, the bundle): the incremental build's proof of date.
const stamp = path.join(root, 'dist', '.build-stamp');
/** What a build reads besides node_modules: the sources, the configs, the lock file (the bundle holds dependencies). */
const inputs = [
  'src',
  'tsconfig.json',
  'tsconfig.build.json',
  'tsconfig.browser.json',
  'package.json',
  'package-lock.json',
];

/** The newest modification time (ms) of `entry`, a file or every file under a directory; 0 when it is missing. */
function newestMtime(entry) {
  const stat = statSync(entry, { throwIfNoEntry: false });
  if (!stat) return 0;
  if (!stat.isDirectory()) return stat.mtimeMs;
  let newest = stat.mtimeMs;
  for (const name of readdirSync(entry, { recursive: true })) {
    const mtime = statSync(path.join(entry, name), { throwIfNoEntry: false })?.mtimeMs ?? 0;
    if (mtime > newest) newest = mtime;
  }
  return newest;
}

/**
 * True when the last whole build is newer than every input and this script: then tsc, the page script and the bundle
 * would write what is there (an incremental tsc alone takes ~8 s of CPU to find that out, on every test run). A
 * directory's own mtime counts too, so a deleted or renamed source rebuilds.
 */
function upToDate() {
  const built = statSync(stamp, { throwIfNoEntry: false })?.mtimeMs;
  if (built === undefined || !existsSync(path.join(root, 'dist', 'cli', 'main.js'))) return false;
  const sources = [...inputs.map((name) => path.join(root, name)), fileURLToPath(import.meta.url)];
  return sources.every((entry) => newestMtime(entry) < built);
}

/** Compiles src/ into dist/; exits non-zero when tsc fails or is not installed. */
function build({ clean }) {
  if (clean) rmSync(path.join(root, 'dist'), { recursive: true, force: true });
  // tsc's build info says what it emitted last time, not whether that is still there: without dist/, start over.
  if (clean || !existsSync(path.join(root, 'dist', 'cli', 'main.js'))) rmSync(buildInfo, { force: true });
  let tsc;
  try {
    tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
  } catch {
    console.error('agent-harness build: typescript is not installed (dev dependencies omitted?); dist/ was not built.');
    return 1;
  }
  const args = [tsc, '-p', path.join(root, 'tsconfig.build.json'), '--incremental', '--tsBuildInfoFile', buildInfo];
  const result = spawnSync(process.execPath, args, { cwd: root, stdio: 'inherit' });
  if (result.status !== 0)
    console.error(
      `agent-harness build: tsc failed (${result.error?.message ?? `exit status ${result.status ?? result.signal}`}).`,
    );
  return result.status ?? 1;
}

/**
 * Replaces tsc's dist/report/html-page-script.js (which would compile the browser sources when first asked, and
 * dist/ has none) with a module returning the compiled page script, compiled by tsc's dist/report/page-script-compile.js
 * from src/report/browser/: the same compile the sources run, so the page is the same either way.
 */
async function writePageScript() {
  const dist = path.join(root, 'dist', 'report');
  const ts = createRequire(import.meta.url)('typescript');
  const { compilePageScript, readBrowserSources } = await import(
    pathToFileURL(path.join(dist, 'page-script-compile.js')).href
  );
  const script = compilePageScript(ts, readBrowserSources(path.join(root, 'src', 'report', 'browser')));
  writeFileSync(
    path.join(dist, 'html-page-script.js'),
    `// Written by scripts/build.mjs: the page script compiled from src/report/browser/ (see src/report/html-page-script.ts).\n` +
      `/** The page script. */\nexport function pageScript() {\n  return ${JSON.stringify(script)};\n}\n`,
  );
}

/** Bundles dist/cli/main.js and what it imports into dist/bundle/cli.mjs, each lazy import a chunk of its own. */
async function bundle() {
  const outfile = path.join(root, 'dist', 'bundle', 'cli.mjs');
  rmSync(path.dirname(outfile), { recursive: true, force: true });
  let esbuild;
  try {
    esbuild = await import('esbuild');
  } catch {
    console.error('agent-harness build: esbuild is not installed; the command runs the unbundled dist/cli/main.js.');
    return 0;
  }
  await esbuild.build({
    entryPoints: { cli: path.join(root, 'dist', 'cli', 'main.js') },
    outdir: path.dirname(outfile),
    outExtension: { '.js': '.mjs' },
    // Each command's lazy imports become chunks of their own: `translate` never reads what only `start` runs.
    splitting: true,
    chunkNames: 'chunk-[hash]',
    bundle: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    minifyWhitespace: true,
    minifySyntax: true,
    // Identifiers are not minified, so functions keep their names (but for a clash between modules: `Option2`);
    // keepNames would wrap each of ~3,000 functions and classes in a call that renames it when its module loads.
    // The native PTY module loads its prebuilt binary relative to its own files. The optional peers (OpenTelemetry,
    // the ACP SDK, the vendor SDKs) are the user's to install: bundled, the tarball would carry a copy of each and a
    // missing one would never be DEPENDENCY_MISSING.
    external: ['@lydell/node-pty', '@opentelemetry/*', '@agentclientprotocol/sdk', 'openai', '@anthropic-ai/sdk'],
    // The CommonJS dependencies bundled into an ES module require Node's built-ins through this.
    banner: {
      js: "import { createRequire as __ahCreateRequire } from 'node:module'; const require = __ahCreateRequire(import.meta.url);",
    },
    logLevel: 'warning',
  });
  return 0;
}

const clean = process.argv.includes('--clean');
if (!clean && upToDate()) {
  console.log('agent-harness build: dist/ is up to date with src/ (nothing to do).');
} else {
  rmSync(stamp, { force: true });
  const status = build({ clean });
  if (status === 0) await writePageScript();
  process.exitCode = status === 0 ? await bundle() : status;
  if (process.exitCode === 0) writeFileSync(stamp, `${new Date().toISOString()}\n`);
}
