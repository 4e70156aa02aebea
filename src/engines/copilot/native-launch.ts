/**
 * GitHub Copilot CLI's npm package (`@github/copilot` 1.0.102) installs `npm-loader.js`, a Node launcher that finds
 * the platform package (`@github/copilot-<platform>-<arch>`, its export `./copilot`) and `spawnSync`s that binary with
 * the same argv and env. The binary is a Node SEA: on its first start it unpacks its 235 MB JavaScript package into
 * `$COPILOT_PKG_CACHE_HOME/pkg/<platform>-<arch>/<version>` (default `$XDG_CACHE_HOME/copilot`), about 2 s, and then
 * runs from there. Every run of the harness has a HOME of its own, so without a shared cache every run would unpack
 * it again.
 *
 * So the harness starts the binary itself, as the launcher would, with `COPILOT_PKG_CACHE_HOME` at a directory of its
 * own cache (`<agent cache>/copilot-pkg`) that it unpacks once, on the host, with the binary's own extract-only mode
 * (`COPILOT_SEA_EXTRACT_ONLY=1`, what the SEA itself runs in a child). An isolated agent sees that directory read-only
 * (`readOnly`), like the binary: nothing an agent writes is run by a later attempt. A layout it does not recognise,
 * a musl host, or a failed unpack runs the launcher as installed (`AGENT_HARNESS_NPM_LAUNCHERS=1` always does), and
 * copilot unpacks into the run's own HOME.
 *
 * Beside it, the harness keeps copilot's V8 compile cache, warmed once on the host, and each attempt's TMPDIR starts
 * with a copy of it (`tmpSeed`, compile-cache.ts): copilot then skips compiling its 8 MB bundle at every start.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { installedPackageFile, readPackageJson } from '../package-files.js';
import type { NativeLaunch, NativeLaunchContext } from '../engine.js';
import { copilotCompileCacheSeed } from './compile-cache.js';

/** How long the one-time unpack may take (ms): far above the 2-3 s it takes on a loaded machine. */
const UNPACK_TIMEOUT_MS = 180_000;

/** Files the SEA checks before it runs from an unpacked package (1.0.102); all must be readable. */
const UNPACKED_FILES = ['index.js', 'app.js', 'cli-main.js'];

/** True when the package unpacked at `dir` has every file the SEA checks. */
function unpacked(dir: string): boolean {
  return UNPACKED_FILES.every((file) => fs.existsSync(path.join(dir, file)));
}

/**
 * The platform binary `executable` launches when it is copilot's npm launcher in an npm layout on glibc Linux, with
 * `COPILOT_PKG_CACHE_HOME` at the harness's unpacked copy (unpacked now when missing); null otherwise.
 */
export function resolveCopilotNativeLaunch(executable: string, ctx?: NativeLaunchContext): NativeLaunch | null {
  if (!ctx) return null;
  const installed = installedPackageFile(executable, '@github/copilot', 'npm-loader.js');
  if (!installed) return null;
  const { file: launcher, root: packageRoot } = installed;
  // The launcher tries `linuxmusl` first on a non-glibc Linux; only the glibc layout is stood in for.
  if (process.platform !== 'linux' || fs.existsSync('/lib/ld-musl-x86_64.so.1')) return null;
  const target = `${process.platform}-${process.arch}`;
  const platformRoot = path.join(path.dirname(packageRoot), `copilot-${target}`);
  const manifest = readPackageJson(path.join(platformRoot, 'package.json'));
  const binary = path.join(platformRoot, 'copilot');
  if (manifest?.name !== `@github/copilot-${target}` || typeof manifest.version !== 'string') return null;
  if (!fs.existsSync(binary)) return null;
  const cacheHome = path.join(ctx.cacheDir, 'copilot-pkg');
  const dir = path.join(cacheHome, 'pkg', target, manifest.version);
  if (!unpacked(dir)) {
    try {
      execFileSync(binary, [], {
        env: {
          PATH: process.env.PATH ?? '/usr/bin:/bin',
          HOME: cacheHome,
          COPILOT_SEA_EXTRACT_ONLY: '1',
          COPILOT_PKG_CACHE_HOME: cacheHome,
        },
        stdio: 'ignore',
        timeout: UNPACK_TIMEOUT_MS,
      });
    } catch {
      return null;
    }
    if (!unpacked(dir)) return null;
  }
  const seed = copilotCompileCacheSeed(binary, cacheHome, path.join(cacheHome, 'tmp-seed', manifest.version));
  return {
    file: binary,
    env: { COPILOT_PKG_CACHE_HOME: cacheHome },
    launcher,
    readOnly: [path.join(dir, 'index.js')],
    ...(seed ? { tmpSeed: seed } : {}),
  };
}
