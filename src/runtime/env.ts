/**
 * The environment of an engine process. Nothing of the host gets in but an allowlist (locale, terminal, the
 * PATH with the managed prefix first); HOME, XDG dirs and TMPDIR are managed; vendor keys only in live mode.
 * In scripted mode every proxy variable points at the model server, which refuses and logs whatever is not
 * the model API: a stray connection can neither reach the internet nor go unnoticed.
 */
import path from 'node:path';
import type { ModelMode } from '../protocol/index.js';
import type { HarnessPaths, RunHome } from './paths.js';
import { compareCodeUnits } from './code-unit-order.js';

/** Host variables copied as they are. */
export const HOST_ENV_ALLOWLIST = [
  'LANG',
  'LANGUAGE',
  'LC_ALL',
  'LC_CTYPE',
  'LC_MESSAGES',
  'TERM',
  'COLORTERM',
  'TZ',
  'NO_COLOR',
] as const;

/** Options of {@link buildEngineEnv}. */
export interface EngineEnvOptions {
  /** Resolved harness paths. */
  paths: HarnessPaths;
  /**
   * The run's own HOME, npm prefix and uv directories (an attempt's); without it, the managed home and prefix
   * themselves.
   */
  runHome?: RunHome;
  /** Host environment (default `process.env`). */
  hostEnv?: NodeJS.ProcessEnv;
  /** Model mode; vendor keys pass only in `live` (a recording's key is added by the harness, outside the engine). */
  modelMode: ModelMode;
  /** Base URL of the scripted model server (scripted/replay/record), null in live mode. */
  modelBaseUrl: string | null;
  /** Vendor variables of the engine, copied from the host in live mode. */
  liveEnvKeys: readonly string[];
  /** Engine-specific variables from `prepare`. */
  engineEnv: Record<string, string>;
}

/** Builds the complete env of an engine process (used with `extendEnv: false`). */
export function buildEngineEnv(options: EngineEnvOptions): Record<string, string> {
  const host = options.hostEnv ?? process.env;
  const { paths } = options;
  const env: Record<string, string> = {};
  for (const name of HOST_ENV_ALLOWLIST) {
    const value = host[name];
    if (value !== undefined) env[name] = value;
  }
  const hostPath = (host.PATH ?? '/usr/local/bin:/usr/bin:/bin').split(path.delimiter);
  const own = options.runHome ?? {
    home: paths.agentHome,
    npmPrefix: paths.npmPrefix,
    uvCacheDir: paths.uvCacheDir,
    uvProjectEnvironment: paths.uvProjectEnvironment,
  };
  const managedBins = [
    ...new Set([path.join(own.npmPrefix, 'bin'), path.join(paths.npmPrefix, 'bin')]),
    path.join(paths.projectRoot, 'node_modules', '.bin'),
  ];
  env.PATH = [...managedBins, ...hostPath.filter((dir) => dir && !managedBins.includes(dir))].join(path.delimiter);
  env.HOME = own.home;
  env.XDG_CONFIG_HOME = path.join(own.home, '.config');
  env.XDG_DATA_HOME = path.join(own.home, '.local', 'share');
  env.XDG_STATE_HOME = path.join(own.home, '.local', 'state');
  env.XDG_CACHE_HOME = path.join(own.home, '.cache');
  env.TMPDIR = paths.tmpDir;
  env.NPM_CONFIG_PREFIX = own.npmPrefix;
  env.UV_CACHE_DIR = own.uvCacheDir;
  env.UV_PROJECT_ENVIRONMENT = own.uvProjectEnvironment;
  env.AGENT_HARNESS = '1';
  if (options.modelMode === 'live') {
    for (const name of options.liveEnvKeys) {
      const value = host[name];
      if (value !== undefined) env[name] = value;
    }
  }
  if (options.modelBaseUrl && options.modelMode !== 'live') {
    for (const name of ['HTTPS_PROXY', 'HTTP_PROXY', 'ALL_PROXY', 'https_proxy', 'http_proxy', 'all_proxy']) {
      // The origin only: an attempt lane's base URL has a path (`/__attempt/<key>`), which a proxy URL has no use for.
      env[name] = new URL(options.modelBaseUrl).origin;
    }
    env.NO_PROXY = env.no_proxy = '127.0.0.1,localhost,::1';
  }
  Object.assign(env, options.engineEnv);
  return env;
}

/** Names of variables whose values are secrets (redacted in the audit's env and, by value, in cassettes). */
export const SECRET_NAME = /KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|AUTH|COOKIE/i;

/** Copy of `env` with the values of secret-looking variables replaced by `[redacted]`. */
export function redactEnv(env: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(env).sort(([a], [b]) => compareCodeUnits(a, b))) {
    out[name] = SECRET_NAME.test(name) ? '[redacted]' : value;
  }
  return out;
}
