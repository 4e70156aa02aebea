/**
 * With the real copilot binary: its V8 compile cache, warmed once on the host (`copilot help config` under a scratch
 * HOME), is accepted by the binary from a copy in a fresh TMPDIR, and each attempt's own TMPDIR starts with such a
 * copy (seen by the agent's shell). The unpacked package is the suite's shared one (the default agent cache); the
 * warm-up under test writes a seed of its own.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runAttempt } from '../../src/core/run-attempt.js';
import { copilotCompileCacheSeed, NODE_COMPILE_CACHE_DIR } from '../../src/engines/copilot/compile-cache.js';
import { COPILOT_CHECKED_VERSIONS } from '../../src/engines/copilot/index.js';
import { resolveCopilotNativeLaunch } from '../../src/engines/copilot/native-launch.js';
import { turns } from '../../src/model/index.js';
import { resolveHarnessPaths } from '../../src/runtime/paths.js';
import { engineMissingReason } from '../helpers/engines.js';
import { scaled } from '../helpers/load-scaled.js';

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'ah-copilot-launch-'));
afterAll(() => fs.rmSync(dataDir, { recursive: true, force: true }));
const agentCacheDir = resolveHarnessPaths({ env: {}, projectRoot: process.cwd(), skillRoots: [] }).agentCacheDir;
const paths = resolveHarnessPaths({
  env: { SKILL_RUNNER_DATA_DIR: dataDir, SKILL_RUNNER_AGENT_CACHE_DIR: agentCacheDir },
  projectRoot: process.cwd(),
  skillRoots: [],
});
const launcher = fs.realpathSync(path.resolve('node_modules/@github/copilot/npm-loader.js'));
const cacheHome = path.join(agentCacheDir, 'copilot-pkg');

/** Each file under `dir/node-compile-cache` with its checksum, sorted: what a TMPDIR's compile cache holds. */
function compileCacheListing(dir: string): string {
  return execFileSync(
    'sh',
    ['-c', `cd "$1" && find ${NODE_COMPILE_CACHE_DIR} -type f -exec cksum {} + | sort`, 'sh', dir],
    {
      encoding: 'utf8',
    },
  );
}

// Skipped, saying why, where copilot cannot run or `AGENT_HARNESS_ENGINES` leaves it out.
const MISSING = await engineMissingReason('copilot');

describe.skipIf(process.platform !== 'linux')('copilot launch: the warmed compile cache', () => {
  it(
    'the binary reads the compiled code of its bundle from a copy of the seed, and rewrites none of it',
    ({ skip }) => {
      if (MISSING) skip(MISSING);
      const native = resolveCopilotNativeLaunch(launcher, { cacheDir: agentCacheDir });
      expect(native).not.toBeNull();
      // A warm-up of its own, from scratch, over the suite's unpacked package.
      const seed = copilotCompileCacheSeed(native!.file, cacheHome, path.join(dataDir, 'seed'));
      expect(seed).toBe(path.join(dataDir, 'seed'));
      const tmp = path.join(dataDir, 'attempt-tmp');
      fs.cpSync(seed!, tmp, { recursive: true });
      const home = fs.mkdtempSync(path.join(dataDir, 'home-'));
      const started = spawnSync(native!.file, ['help', 'config'], {
        cwd: home,
        env: {
          PATH: process.env.PATH,
          HOME: home,
          TMPDIR: tmp,
          COPILOT_OFFLINE: 'true',
          COPILOT_AUTO_UPDATE: 'false',
          ...native!.env,
          NODE_DEBUG_NATIVE: 'COMPILE_CACHE',
        },
        encoding: 'utf8',
        timeout: scaled(60_000),
      });
      expect(started.status, started.stderr).toBe(0);
      const pkg = path.join(cacheHome, 'pkg', `${process.platform}-${process.arch}`, COPILOT_CHECKED_VERSIONS);
      // `index.js` turns the cache on (`module.enableCompileCache()`), so the modules it loads are the ones cached.
      for (const file of ['app.js', 'cli-main.js']) {
        const url = `file://${path.join(pkg, file)}`;
        expect(started.stderr).toContain(`V8 code cache for ESM ${url} was accepted`);
        expect(started.stderr).toContain(`skip persisting ESM ${url} because cache was the same`);
      }
      expect(compileCacheListing(tmp)).toBe(compileCacheListing(seed!));
    },
    scaled(120_000),
  );

  it(
    "an attempt's TMPDIR starts with a copy of the harness's seed",
    async ({ skip }) => {
      if (MISSING) skip(MISSING);
      const script = {
        version: 1 as const,
        turns: [
          turns.shell(`(cd "$TMPDIR" && find ${NODE_COMPILE_CACHE_DIR} -type f -exec cksum {} + | sort) > seeded.txt`),
          turns.final('Done.'),
        ],
      };
      const result = await runAttempt({ paths, engine: 'copilot', launch: 'start', prompt: 'go', script });
      expect(result.completion.state, result.error?.message).toBe('completed');
      const seed = resolveCopilotNativeLaunch(launcher, { cacheDir: agentCacheDir })?.tmpSeed;
      expect(seed).toBe(path.join(cacheHome, 'tmp-seed', COPILOT_CHECKED_VERSIONS));
      const seen = fs.readFileSync(path.join(result.runDir, 'seeded.txt'), 'utf8');
      expect(seen.trim().split('\n').length).toBeGreaterThanOrEqual(2);
      expect(seen).toBe(compileCacheListing(seed!));
    },
    scaled(180_000),
  );
});
