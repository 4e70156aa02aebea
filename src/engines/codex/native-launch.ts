/**
 * Codex's npm package (`@openai/codex` 0.169) installs `bin/codex.js`, a Node launcher: it finds the native binary in
 * the platform package (`@openai/codex-linux-x64/vendor/<triple>/bin/codex`), adds two variables to the env, and
 * then `execve`s the binary (Node ≥ 22) or, on Node 20, spawns it as a child and relays signals and the exit code.
 * Either way a Node process starts before codex does: ~40 ms of a 0.22 s scripted turn on the 2-core machine, and a
 * second process per attempt on Node 20 (bench/RESULTS.md, "npm wrapper vs native binary").
 *
 * The harness is already a running Node process, so it starts the binary itself, as the launcher's `execve` would:
 * the same file, the same argv, the launcher's env (`CODEX_MANAGED_PACKAGE_ROOT`, `CODEX_MANAGED_BY_NPM=1`). It
 * does so only when it can tell exactly what the launcher would do: an npm layout it recognises (not pnpm or
 * Vite+, whose launcher sets another variable) and a binary that exists. Anything else runs the launcher as
 * installed, and `AGENT_HARNESS_NPM_LAUNCHERS=1` always does. The meta records both (`command.executable`, the
 * binary; `command.launcher`, the script stood in for).
 */
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { installedPackageFile, realpathOrNull } from '../package-files.js';
import type { NativeLaunch } from '../engine.js';

/** The platform packages of the launcher, by `process.platform`/`process.arch` (Windows keeps the launcher). */
const TARGETS: Record<string, { triple: string; pkg: string }> = {
  'linux/x64': { triple: 'x86_64-unknown-linux-musl', pkg: '@openai/codex-linux-x64' },
  'linux/arm64': { triple: 'aarch64-unknown-linux-musl', pkg: '@openai/codex-linux-arm64' },
  'android/x64': { triple: 'x86_64-unknown-linux-musl', pkg: '@openai/codex-linux-x64' },
  'android/arm64': { triple: 'aarch64-unknown-linux-musl', pkg: '@openai/codex-linux-arm64' },
  'darwin/x64': { triple: 'x86_64-apple-darwin', pkg: '@openai/codex-darwin-x64' },
  'darwin/arm64': { triple: 'aarch64-apple-darwin', pkg: '@openai/codex-darwin-arm64' },
};

/**
 * True when the launcher would not say `CODEX_MANAGED_BY_NPM`: an ancestor of the package holds a pnpm store
 * (`node_modules/.modules.yaml` whose `@openai/codex` is this package) or Vite+ metadata (`packages/@openai/codex.json`).
 */
function otherPackageManager(packageRoot: string): boolean {
  const top = path.parse(packageRoot).root;
  for (let dir = packageRoot; ; dir = path.dirname(dir)) {
    const modules = path.join(dir, 'node_modules');
    if (
      fs.existsSync(path.join(modules, '.modules.yaml')) &&
      realpathOrNull(path.join(modules, '@openai', 'codex')) === packageRoot
    )
      return true;
    if (path.basename(dir) === 'packages' && fs.existsSync(path.join(dir, '@openai', 'codex.json'))) return true;
    if (dir === top) return false;
  }
}

/**
 * The native binary `executable` launches when it is codex's npm launcher (`@openai/codex/bin/codex.js`) in an npm
 * layout, with the env the launcher would give it; null when it is anything else (the binary itself, another
 * script, a pnpm or Vite+ install, a missing platform package, Windows): then the executable runs as it is.
 */
export function resolveCodexNativeLaunch(executable: string): NativeLaunch | null {
  const installed = installedPackageFile(executable, '@openai/codex', 'bin/codex.js');
  if (!installed) return null;
  const { file: launcher, root: packageRoot } = installed;
  const target = TARGETS[`${process.platform}/${process.arch}`];
  if (!target || otherPackageManager(packageRoot)) return null;
  // Where the launcher looks: the platform package as its own require() resolves it, else the package's vendor dir.
  let vendorRoot = path.join(packageRoot, 'vendor');
  try {
    vendorRoot = path.join(path.dirname(createRequire(launcher).resolve(`${target.pkg}/package.json`)), 'vendor');
  } catch {
    // no platform package: the launcher falls back to vendor/ as well
  }
  const file = path.join(vendorRoot, target.triple, 'bin', 'codex');
  if (!fs.existsSync(file)) return null;
  return { file, env: { CODEX_MANAGED_PACKAGE_ROOT: packageRoot, CODEX_MANAGED_BY_NPM: '1' }, launcher };
}
