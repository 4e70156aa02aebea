/**
 * Resolved locations of a harness installation, from the environment with the deploy semantics of seed 001
 * (Decision 3): SKILL_RUNNER_* variables are honoured so the harness and a Skill-Runner deployment agree on
 * where data, the agent home and the npm prefix live; the harness run root stays separate (`harness_runs/`).
 */
import fs from 'node:fs';
import path from 'node:path';

/** Every path the harness reads or writes, resolved to absolute paths. */
export interface HarnessPaths {
  /** Project root: nearest ancestor of the working directory with a package.json. */
  projectRoot: string;
  /** `SKILL_RUNNER_DATA_DIR`, else `<projectRoot>/.agent-harness`. */
  dataDir: string;
  /** `AGENT_HARNESS_RUN_ROOT`, else `<dataDir>/harness_runs`. */
  runRoot: string;
  /** `SKILL_RUNNER_AGENT_CACHE_DIR`, else `<dataDir>/agent_cache`. */
  agentCacheDir: string;
  /**
   * `SKILL_RUNNER_AGENT_HOME`, else `<agentCacheDir>/agent_home`: the managed home. Each run's engines get a HOME of
   * their own under it ({@link runHome}), so no run reads another's sessions or changes what later runs load.
   */
  agentHome: string;
  /**
   * `SKILL_RUNNER_NPM_PREFIX`, else `NPM_CONFIG_PREFIX`, else `<agentCacheDir>/npm`: the managed prefix, searched first
   * for engines; read-only inside attempts (an agent's `npm install -g` goes to its run's own prefix, {@link runHome}).
   */
  npmPrefix: string;
  /**
   * `AGENT_HARNESS_ENGINE_PREFIX`: an npm prefix holding other releases of the engines (`npm install --prefix DIR
   * <package>@<version>`), searched for engines before every other place (its `node_modules/.bin`, then its `bin`);
   * unset: none. How `npm run test:engines -- --latest` runs the newest releases without touching the pins. An
   * executable there is refused like any other when it lies where agents write.
   */
  enginePrefix?: string | undefined;
  /** `UV_CACHE_DIR`, else `<agentCacheDir>/uv_cache`. */
  uvCacheDir: string;
  /** `UV_PROJECT_ENVIRONMENT`, else `<agentCacheDir>/uv_venv`. */
  uvProjectEnvironment: string;
  /** TMPDIR of engine processes: `<agentCacheDir>/tmp`, outside every engine config home. */
  tmpDir: string;
  /** Skill source roots, scanned in order (later ones override earlier ones). */
  skillRoots: string[];
  /** Name of the codex profile the harness writes (`AGENT_HARNESS_CODEX_PROFILE`, default `agent-harness`). */
  codexProfile: string;
}

/** Options of {@link resolveHarnessPaths}. */
export interface ResolvePathsOptions {
  /** Environment to read (default `process.env`). */
  env?: NodeJS.ProcessEnv;
  /** Working directory used to find the project root (default `process.cwd()`). */
  cwd?: string;
  /** Skip the search and use this project root. */
  projectRoot?: string;
  /** Override the run root (takes precedence over the env). */
  runRoot?: string;
  /** Override the skill roots (takes precedence over the env). */
  skillRoots?: string[];
  /** Override the codex profile name. */
  codexProfile?: string;
}

/** Default skill roots relative to the project root (seed 001, Decision 10). */
export const DEFAULT_SKILL_ROOTS = ['skills', 'tests/fixtures/skills'] as const;

/**
 * The data directory under the project root when `SKILL_RUNNER_DATA_DIR` is not set: a hidden, tool-named folder,
 * because `data/` (the seed's deploy default) is a common folder name in users' own projects.
 */
export const DEFAULT_DATA_DIR = '.agent-harness';

/** Default codex profile name. */
export const DEFAULT_CODEX_PROFILE = 'agent-harness';

/** Walks up from `start` to the nearest directory holding a package.json; `start` itself when none. */
export function findProjectRoot(start: string): string {
  let dir = path.resolve(start);
  for (;;) {
    if (fs.existsSync(path.join(dir, 'package.json'))) return dir;
    const parent = path.dirname(dir);
    if (parent === dir) return path.resolve(start);
    dir = parent;
  }
}

/** Resolves every harness path from the environment and options. Pure apart from the project-root search. */
export function resolveHarnessPaths(options: ResolvePathsOptions = {}): HarnessPaths {
  const env = options.env ?? process.env;
  const cwd = options.cwd ?? process.cwd();
  const projectRoot = path.resolve(options.projectRoot ?? findProjectRoot(cwd));
  const pick = (name: string): string | undefined => {
    const value = env[name];
    return value !== undefined && value.trim() !== '' ? path.resolve(projectRoot, value) : undefined;
  };
  const dataDir = pick('SKILL_RUNNER_DATA_DIR') ?? path.join(projectRoot, DEFAULT_DATA_DIR);
  const agentCacheDir = pick('SKILL_RUNNER_AGENT_CACHE_DIR') ?? path.join(dataDir, 'agent_cache');
  const skillRootsEnv = env.AGENT_HARNESS_SKILL_ROOTS;
  const skillRoots =
    options.skillRoots ??
    (skillRootsEnv ? skillRootsEnv.split(path.delimiter).filter(Boolean) : [...DEFAULT_SKILL_ROOTS]);
  return {
    projectRoot,
    dataDir,
    runRoot: options.runRoot
      ? path.resolve(projectRoot, options.runRoot)
      : (pick('AGENT_HARNESS_RUN_ROOT') ?? path.join(dataDir, 'harness_runs')),
    agentCacheDir,
    agentHome: pick('SKILL_RUNNER_AGENT_HOME') ?? path.join(agentCacheDir, 'agent_home'),
    npmPrefix: pick('SKILL_RUNNER_NPM_PREFIX') ?? pick('NPM_CONFIG_PREFIX') ?? path.join(agentCacheDir, 'npm'),
    enginePrefix: pick(ENGINE_PREFIX_ENV),
    uvCacheDir: pick('UV_CACHE_DIR') ?? path.join(agentCacheDir, 'uv_cache'),
    uvProjectEnvironment: pick('UV_PROJECT_ENVIRONMENT') ?? path.join(agentCacheDir, 'uv_venv'),
    tmpDir: path.join(agentCacheDir, 'tmp'),
    skillRoots: skillRoots.map((root) => path.resolve(projectRoot, root)),
    codexProfile: options.codexProfile ?? (env.AGENT_HARNESS_CODEX_PROFILE?.trim() || DEFAULT_CODEX_PROFILE),
  };
}

/** The variable naming {@link HarnessPaths.enginePrefix}, where other engine releases are installed. */
export const ENGINE_PREFIX_ENV = 'AGENT_HARNESS_ENGINE_PREFIX';

/** The env variable names that feed {@link resolveHarnessPaths}, for `doctor`'s export snapshot. */
export const PATH_ENV_VARS = [
  'AGENT_HARNESS_RUN_ROOT',
  'AGENT_HARNESS_SKILL_ROOTS',
  'AGENT_HARNESS_CODEX_PROFILE',
  'SKILL_RUNNER_DATA_DIR',
  'SKILL_RUNNER_AGENT_CACHE_DIR',
  'SKILL_RUNNER_AGENT_HOME',
  'SKILL_RUNNER_NPM_PREFIX',
  'NPM_CONFIG_PREFIX',
  'UV_CACHE_DIR',
  'UV_PROJECT_ENVIRONMENT',
] as const;

/**
 * Where one run's engines keep their state: a HOME of its own under the managed home, with its own npm prefix and uv
 * directories inside it. Read-write to that run's attempts only; the shared managed prefix is read-only to them, so
 * nothing an agent writes is run by a later attempt of another run or by a command on the host (issue 42).
 */
export interface RunHome {
  /** `<agentHome>/runs/<run id>`: HOME, the XDG directories and the engines' config homes of the run. */
  home: string;
  /** The run's `NPM_CONFIG_PREFIX` (its bin comes first on the agent's PATH). */
  npmPrefix: string;
  /** The run's `UV_CACHE_DIR`. */
  uvCacheDir: string;
  /** The run's `UV_PROJECT_ENVIRONMENT`. */
  uvProjectEnvironment: string;
}

/** The {@link RunHome} of the run `runId` (a run id as the run store makes them: one path component). */
export function runHome(paths: Pick<HarnessPaths, 'agentHome'>, runId: string): RunHome {
  if (runId === '' || runId.includes('/') || runId === '.' || runId === '..')
    throw new Error(`internal: "${runId}" is not a run id`);
  const home = path.join(paths.agentHome, 'runs', runId);
  return {
    home,
    npmPrefix: path.join(home, '.npm-global'),
    uvCacheDir: path.join(home, '.cache', 'uv'),
    uvProjectEnvironment: path.join(home, '.local', 'share', 'uv-venv'),
  };
}
