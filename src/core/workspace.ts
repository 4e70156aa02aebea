/**
 * Seeded workspaces: a new run can start from files instead of an empty directory — a template directory copied
 * in, inline files written, and (by default for templates) a git repository with one initial commit, so that
 * agents behave as they do in a real project (`codex exec` refuses a non-repo directory), and the audit gets a
 * real `git diff` of the agent's work (`git-diff.N.patch`).
 *
 * Seeding happens before the skills are injected and before `fs-before`, so the fs diff and the git diff show
 * only what the agent did. The harness's own files in the run dir (skill roots, engine settings) are listed in
 * `.git/info/exclude`, so `git status` inside the run shows the agent's changes only.
 */
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { AgentHarnessError } from '../errors/index.js';
import { MAX_CONFIG_BYTES, readInputBytesSync } from '../runtime/bounded-input.js';
import { treeProblem } from '../runtime/isolation/contained-tree.js';
import type { HostPathRule } from '../runtime/isolation/host-path-rule.js';
import { appendOwnFileSync } from '../runtime/own-file.js';

/** What a new run's working directory starts with. */
export interface WorkspaceSeed {
  /** A directory whose contents are copied into the run dir (absolute, or relative to the project root). */
  template?: string;
  /** Files to write, by path relative to the run dir; string content is written as UTF-8. */
  files?: Readonly<Record<string, string | Uint8Array>>;
  /** Make the run dir a git repository with one initial commit (default: true with a template, else false). */
  git?: boolean;
}

/** What seeding did, for the audit meta. */
export interface WorkspaceSeedRecord {
  template: string | null;
  files: string[];
  git_commit: string | null;
}

/** Identity and config for the harness's git calls: nothing of the host's git config is read. */
const GIT_SETTINGS: Readonly<Record<string, string>> = {
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_CONFIG_GLOBAL: '/dev/null',
  GIT_AUTHOR_NAME: 'agent-harness',
  GIT_AUTHOR_EMAIL: 'agent-harness@localhost',
  GIT_COMMITTER_NAME: 'agent-harness',
  GIT_COMMITTER_EMAIL: 'agent-harness@localhost',
  GIT_AUTHOR_DATE: '2000-01-01T00:00:00Z',
  GIT_COMMITTER_DATE: '2000-01-01T00:00:00Z',
};

/**
 * execa, loaded at the first git call: most attempts run none (no seed, no repository), and a command's only
 * attempt would otherwise load it before its engine starts (issue 13).
 */
async function loadExeca(): Promise<typeof import('execa').execa> {
  return (await import('execa')).execa;
}

/**
 * The environment of the harness's git calls: this process's, without any `GIT_*` variable, then the settings above
 * (and `extra`). A harness started from a git hook (a pre-commit or pre-push hook running the tests) inherits
 * `GIT_DIR`, `GIT_INDEX_FILE`, `GIT_WORK_TREE` or `GIT_CONFIG_PARAMETERS` meant for the user's repository: with them,
 * seeding a run directory committed its files into the user's repository instead (its branch moved).
 */
function gitEnv(extra: Record<string, string> = {}): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (value !== undefined && !name.toUpperCase().startsWith('GIT_')) env[name] = value;
  }
  return { ...env, ...GIT_SETTINGS, ...extra };
}

/** Longest a git call of the harness may take: a FIFO in the agent's `.git` must not hold an attempt forever. */
const GIT_TIMEOUT_MS = 120_000;

/**
 * Config for git calls in a repository the agent could write to. The run directory's `.git` is in the agent's working
 * directory, and the harness runs git there on the host, outside the attempt's namespaces: a hook, an fsmonitor, a
 * clean filter or an external diff named by that repository would run the agent's command with the host's network
 * and environment. So hooks and fsmonitor are off, every filter driver the repository's config defines is emptied
 * (their names are read with `git config`, which runs nothing), submodules are not entered and the diff uses neither
 * external tools nor textconv (`--no-ext-diff --no-textconv`). Given as `-c` options (any git version; git passes
 * them on to its own child processes). Null when a driver's name cannot be given that way (it holds `=`): the caller
 * then runs no git at all.
 */
async function untrustedRepoArgs(runDir: string): Promise<string[] | null> {
  const settings = [
    'core.hooksPath=/dev/null',
    'core.fsmonitor=false',
    'gc.auto=0',
    'diff.external=',
    'submodule.recurse=false',
    'diff.ignoreSubmodules=all',
  ];
  const execa = await loadExeca();
  const listed = await execa('git', ['config', '--null', '--name-only', '--get-regexp', '^filter\\.'], {
    cwd: runDir,
    env: gitEnv(),
    extendEnv: false,
    stdin: 'ignore',
    reject: false,
    timeout: GIT_TIMEOUT_MS,
  });
  const drivers = new Set(
    String(listed.stdout ?? '')
      .split('\0')
      .filter((key) => key.startsWith('filter.'))
      .map((key) => key.slice('filter.'.length, key.lastIndexOf('.'))),
  );
  for (const driver of drivers) {
    if (driver.includes('=')) return null;
    settings.push(
      `filter.${driver}.clean=`,
      `filter.${driver}.smudge=`,
      `filter.${driver}.process=`,
      `filter.${driver}.required=false`,
    );
  }
  return settings.flatMap((setting) => ['-c', setting]);
}

async function git(runDir: string, args: readonly string[], extraEnv: Record<string, string> = {}): Promise<string> {
  try {
    const execa = await loadExeca();
    const result = await execa('git', args, {
      cwd: runDir,
      env: gitEnv(extraEnv),
      extendEnv: false,
      stdin: 'ignore',
      timeout: GIT_TIMEOUT_MS,
    });
    return result.stdout;
  } catch (error) {
    const code = (error as { code?: string }).code === 'ENOENT' ? 'WORKSPACE_GIT_UNAVAILABLE' : 'WORKSPACE_INVALID';
    const shown = args.filter((arg, i) => arg !== '-c' && args[i - 1] !== '-c');
    throw new AgentHarnessError(
      code,
      `git ${shown.join(' ')} failed in ${runDir}: ${(error as Error).message.split('\n')[0]}`,
      { cause: error },
    );
  }
}

/** A seed file path, checked: relative, inside the run dir, not into `.git` or `.audit`. */
function seedTarget(runDir: string, relative: string): string {
  const normalized = path.normalize(relative);
  if (
    path.isAbsolute(relative) ||
    normalized.startsWith('..') ||
    normalized === '.' ||
    /^(?:\.git|\.audit)(?:[/\\]|$)/.test(normalized)
  ) {
    throw new AgentHarnessError(
      'WORKSPACE_INVALID',
      `Seed file path ${JSON.stringify(relative)} must be relative to the run directory and stay inside it (not .git or .audit).`,
      { details: { path: relative } },
    );
  }
  return path.join(runDir, normalized);
}

/** True when the seed asks for anything. */
export function hasWorkspaceSeed(seed: WorkspaceSeed | undefined): seed is WorkspaceSeed {
  return Boolean(seed && (seed.template || (seed.files && Object.keys(seed.files).length > 0) || seed.git));
}

/**
 * Refuses a template the host path rule does not let into a run (`runtime/isolation/contained-tree.ts`): itself the
 * HOME, `/` or the run root's, or holding a symlink that leads out of it. WORKSPACE_INVALID naming the link and why;
 * checked before the run directory is made.
 */
export function assertTemplateContained(
  seed: WorkspaceSeed | undefined,
  projectRoot: string,
  rule: HostPathRule,
): void {
  if (!seed?.template) return;
  const template = path.resolve(projectRoot, seed.template);
  const problem = treeProblem(template, rule);
  if (problem)
    throw new AgentHarnessError('WORKSPACE_INVALID', `Template ${template}: ${problem}.`, { details: { template } });
}

/** Copies the template, writes the files, and makes the initial commit when asked. */
export async function seedWorkspace(
  runDir: string,
  seed: WorkspaceSeed,
  projectRoot: string,
): Promise<WorkspaceSeedRecord> {
  let template: string | null = null;
  if (seed.template) {
    template = path.resolve(projectRoot, seed.template);
    const stat = await fsp.stat(template).catch(() => null);
    if (!stat?.isDirectory())
      throw new AgentHarnessError('WORKSPACE_INVALID', `Template ${template} is not a directory.`, {
        details: { template },
      });
    await fsp.cp(template, runDir, { recursive: true, force: true, errorOnExist: false, verbatimSymlinks: true });
  }
  const files = Object.keys(seed.files ?? {});
  for (const [relative, content] of Object.entries(seed.files ?? {})) {
    const target = seedTarget(runDir, relative);
    await fsp.mkdir(path.dirname(target), { recursive: true });
    await fsp.writeFile(target, content);
  }
  const wantGit = seed.git ?? Boolean(seed.template);
  if (!wantGit) return { template, files, git_commit: null };
  if (!fs.existsSync(path.join(runDir, '.git'))) await git(runDir, ['init', '-q', '-b', 'main']);
  // The audit already holds this attempt's files: never part of the agent's repository.
  await excludeHarnessPaths(runDir, []);
  await git(runDir, ['add', '-A']);
  await git(runDir, [
    'commit',
    '-q',
    '--allow-empty',
    '--no-gpg-sign',
    '--no-verify',
    '-m',
    'agent-harness: seed workspace',
  ]);
  return { template, files, git_commit: (await git(runDir, ['rev-parse', 'HEAD'])).trim() };
}

/** Lists the harness's own paths in `.git/info/exclude`, so `git status` shows only the agent's work. */
export async function excludeHarnessPaths(runDir: string, relativePaths: readonly string[]): Promise<void> {
  const file = path.join(runDir, '.git', 'info', 'exclude');
  if (!fs.existsSync(path.join(runDir, '.git'))) return;
  await fsp.mkdir(path.dirname(file), { recursive: true });
  // The agent's repository: read as an input and appended as an own file, so a FIFO or a symlink there is refused.
  const existing = fs.existsSync(file)
    ? readInputBytesSync(file, {
        what: 'git exclude file',
        maxBytes: MAX_CONFIG_BYTES,
        unreadableCode: 'WORKSPACE_INVALID',
      }).toString('utf8')
    : '';
  const missing = ['/.audit/', ...relativePaths.map((p) => `/${p.replace(/^\/+/, '')}`)].filter(
    (line) => !existing.split('\n').includes(line),
  );
  if (missing.length > 0)
    appendOwnFileSync(
      file,
      `${existing && !existing.endsWith('\n') ? '\n' : ''}# agent-harness\n${missing.join('\n')}\n`,
    );
}

/**
 * The agent's changes as a patch against the seed commit (new files included), computed with a temporary index
 * so the run's own index is never touched; null when the run dir is not a git repository.
 */
export async function gitDiffPatch(runDir: string, indexFile: string): Promise<string | null> {
  // An empty `.git` directory is no repository: codex's sandbox leaves one as a mount point when it is killed.
  const dotGit = path.join(runDir, '.git');
  if (!fs.existsSync(path.join(dotGit, 'HEAD')) && !fs.statSync(dotGit, { throwIfNoEntry: false })?.isFile())
    return null;
  // The repository is the agent's: git must run nothing it names (hooks, fsmonitor, filters, diff drivers).
  const safe = await untrustedRepoArgs(runDir);
  if (!safe) return null;
  const env = { GIT_INDEX_FILE: indexFile };
  try {
    await git(runDir, [...safe, 'read-tree', 'HEAD'], env);
    await git(runDir, [...safe, 'add', '-A'], env);
    return `${await git(runDir, [...safe, 'diff', '--cached', '--binary', '--no-ext-diff', '--no-textconv', '--ignore-submodules=all', 'HEAD'], env)}\n`.replace(
      /^\n$/,
      '',
    );
  } finally {
    await fsp.rm(indexFile, { force: true });
  }
}
