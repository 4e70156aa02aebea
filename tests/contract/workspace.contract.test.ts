/**
 * Seeded workspaces: template and inline files copied into a new run dir, the git repository with its seed
 * commit, the harness's own paths excluded from git, the patch of the agent's work, and hostile seed paths.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { afterAll, describe, expect, it } from 'vitest';
import { excludeHarnessPaths, gitDiffPatch, seedWorkspace } from '../../src/core/workspace.js';
import { isAgentHarnessError } from '../../src/errors/index.js';

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'ah-workspace-'));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));
let n = 0;
const freshDir = (): string => fs.mkdtempSync(path.join(tmp, `run-${(n += 1)}-`));

describe('seeded workspaces', () => {
  it('copies the template, writes inline files, and commits them as the seed (git on by default with a template)', async () => {
    const template = path.join(tmp, 'template');
    fs.mkdirSync(path.join(template, 'src'), { recursive: true });
    fs.writeFileSync(path.join(template, 'src', 'a.txt'), 'a\n');
    const runDir = freshDir();
    // The run's audit exists before seeding; it must stay out of the repository.
    fs.mkdirSync(path.join(runDir, '.audit'));
    fs.writeFileSync(path.join(runDir, '.audit', 'run.json'), '{}');
    const record = await seedWorkspace(
      runDir,
      { template: 'template', files: { 'data/x.csv': 'x,1\n', 'bin.dat': new Uint8Array([0, 1, 2]) } },
      tmp,
    );
    expect(record).toMatchObject({
      template,
      files: ['data/x.csv', 'bin.dat'],
      git_commit: expect.stringMatching(/^[0-9a-f]{40}$/),
    });
    expect(fs.readFileSync(path.join(runDir, 'src', 'a.txt'), 'utf8')).toBe('a\n');
    expect([...fs.readFileSync(path.join(runDir, 'bin.dat'))]).toEqual([0, 1, 2]);
    const tracked = execFileSync('git', ['ls-files'], { cwd: runDir, encoding: 'utf8' }).trim().split('\n').sort();
    expect(tracked).toEqual(['bin.dat', 'data/x.csv', 'src/a.txt']);
    // Nothing of the host's git identity: the seed commit is the harness's.
    expect(execFileSync('git', ['log', '-1', '--format=%an <%ae>'], { cwd: runDir, encoding: 'utf8' }).trim()).toBe(
      'agent-harness <agent-harness@localhost>',
    );
  });

  it('inline files alone make no repository unless git is asked for', async () => {
    const runDir = freshDir();
    expect((await seedWorkspace(runDir, { files: { 'a.txt': 'a' } }, tmp)).git_commit).toBeNull();
    expect(fs.existsSync(path.join(runDir, '.git'))).toBe(false);
    expect(await gitDiffPatch(runDir, path.join(tmp, 'idx'))).toBeNull();
    const withGit = freshDir();
    expect((await seedWorkspace(withGit, { files: { 'a.txt': 'a' }, git: true }, tmp)).git_commit).toMatch(
      /^[0-9a-f]{40}$/,
    );
  });

  it("the patch holds the agent's work (new files too), not the harness paths, and leaves the index alone", async () => {
    const runDir = freshDir();
    await seedWorkspace(runDir, { files: { 'CHANGELOG.md': '# Log\n' }, git: true }, tmp);
    await excludeHarnessPaths(runDir, ['.codex/']);
    fs.mkdirSync(path.join(runDir, '.codex', 'skills', 's'), { recursive: true });
    fs.writeFileSync(path.join(runDir, '.codex', 'skills', 's', 'SKILL.md'), 'skill');
    fs.appendFileSync(path.join(runDir, 'CHANGELOG.md'), '- change\n');
    fs.writeFileSync(path.join(runDir, 'stats.json'), '{}');
    const patch = (await gitDiffPatch(runDir, path.join(tmp, 'idx2')))!;
    expect(patch).toContain('+- change');
    expect(patch).toContain('b/stats.json');
    expect(patch).not.toContain('SKILL.md');
    expect(execFileSync('git', ['status', '--porcelain'], { cwd: runDir, encoding: 'utf8' })).toBe(
      ' M CHANGELOG.md\n?? stats.json\n',
    );
    expect(fs.existsSync(path.join(tmp, 'idx2'))).toBe(false);
  });

  it("started from a git hook (GIT_DIR, GIT_WORK_TREE, GIT_INDEX_FILE inherited), leaves the user's repository alone", async () => {
    // The user's repository, as a hook sees it: its variables point there, whatever the harness's cwd.
    const user = freshDir();
    const hostGit = (args: string[]): string =>
      execFileSync('git', args, {
        cwd: user,
        encoding: 'utf8',
        env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: user },
      });
    hostGit(['init', '-q', '-b', 'main']);
    fs.writeFileSync(path.join(user, 'mine.txt'), 'mine\n');
    hostGit(['add', 'mine.txt']);
    hostGit(['-c', 'user.name=u', '-c', 'user.email=u@x', 'commit', '-q', '-m', 'mine']);
    const head = hostGit(['rev-parse', 'HEAD']);
    const index = fs.readFileSync(path.join(user, '.git', 'index'));
    const hookEnv = {
      GIT_DIR: path.join(user, '.git'),
      GIT_WORK_TREE: user,
      GIT_INDEX_FILE: path.join(user, '.git', 'index'),
      GIT_CONFIG_PARAMETERS: "'user.name'='hook'",
    };
    const saved = Object.fromEntries(Object.keys(hookEnv).map((name) => [name, process.env[name]]));
    Object.assign(process.env, hookEnv);
    const runDir = freshDir();
    let record: Awaited<ReturnType<typeof seedWorkspace>>;
    let patch: Awaited<ReturnType<typeof gitDiffPatch>>;
    try {
      record = await seedWorkspace(runDir, { files: { 'seed.txt': 'seed\n' }, git: true }, tmp);
      await excludeHarnessPaths(runDir, []);
      fs.writeFileSync(path.join(runDir, 'agent.txt'), 'agent\n');
      patch = await gitDiffPatch(runDir, path.join(tmp, 'idx-hook'));
    } finally {
      for (const [name, value] of Object.entries(saved)) {
        if (value === undefined) delete process.env[name];
        else process.env[name] = value;
      }
    }
    // The user's repository: the same commit, the same index, nothing new in its work tree.
    expect(hostGit(['rev-parse', 'HEAD'])).toBe(head);
    expect(fs.readFileSync(path.join(user, '.git', 'index')).equals(index)).toBe(true);
    expect(hostGit(['status', '--porcelain'])).toBe('');
    // The run's own repository got the seed, and the patch the agent's file.
    expect(fs.existsSync(path.join(runDir, '.git', 'HEAD'))).toBe(true);
    expect(record.git_commit).toBe(
      execFileSync('git', ['rev-parse', 'HEAD'], {
        cwd: runDir,
        encoding: 'utf8',
        env: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
      }).trim(),
    );
    expect(patch).toContain('b/agent.txt');
    expect(patch).not.toContain('mine.txt');
  });

  it.for(['../escape.txt', '/etc/passwd', '.git/config', '.audit/meta.1.json', 'a/../../b'])(
    'refuses the seed path %s with WORKSPACE_INVALID',
    async (bad) => {
      const error = await seedWorkspace(freshDir(), { files: { [bad]: 'x' } }, tmp).catch((e: unknown) => e);
      expect(isAgentHarnessError(error, 'WORKSPACE_INVALID')).toBe(true);
    },
  );

  it('a template that is not a directory is WORKSPACE_INVALID', async () => {
    const error = await seedWorkspace(freshDir(), { template: 'no-such-dir' }, tmp).catch((e: unknown) => e);
    expect(isAgentHarnessError(error, 'WORKSPACE_INVALID')).toBe(true);
    expect((error as Error).message).toContain(path.join(tmp, 'no-such-dir'));
  });
});
