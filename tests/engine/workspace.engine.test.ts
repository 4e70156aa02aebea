/**
 * A seeded git workspace lets codex run as in a real project: `codex exec` refuses a directory that is not a git
 * repository unless given `--skip-git-repo-check`; with a template the run dir is a repository, so the plain
 * command works.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { test, turns } from '../../src/public/vitest.js';
import { REPO } from '../helpers/cli.js';
import { scaled } from '../helpers/load-scaled.js';

describe('codex in a seeded git workspace', () => {
  test('`codex exec --json` completes without --skip-git-repo-check', async ({ model, agent }) => {
    model.script(turns.shell('git status --porcelain; cat CHANGELOG.md'), turns.final('Looked at the repo.'));
    const run = await agent.start('codex', {
      template: 'fixtures/repos/changelog',
      args: ['exec', '--json', 'Look at the changelog.'],
    });
    expect(run.error).toBeNull();
    expect(run).toHaveCompleted();
    // The agent sees a clean repository: the harness's own paths are excluded from git.
    expect(run.toolCalls[0]).toMatchObject({ exitCode: 0 });
    expect(run.toolCalls[0]?.output).toContain('# Changelog');
    expect(run.toolCalls[0]?.output).not.toMatch(/\?\? \.codex/);
    // Neither the harness's audit nor its skills: `git status --porcelain` printed nothing before the changelog.
    expect(run.toolCalls[0]?.output?.trimStart().startsWith('# Changelog')).toBe(true);
  });

  it('from the CLI, outside any git repository: `start --template DIR codex exec --json "hi"` completes; without a template codex refuses', () => {
    const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'ah-template-cli-'));
    try {
      const script = path.join(tmp, 'script.json');
      fs.writeFileSync(script, JSON.stringify({ version: 1, turns: [{ type: 'final', text: 'hi there' }] }));
      fs.writeFileSync(path.join(tmp, 'notes.txt'), 'seeded from a file\n');
      const env = { ...process.env, AGENT_HARNESS_RUN_ROOT: path.join(tmp, 'runs') };
      const cli = (args: string[]) =>
        spawnSync(process.execPath, [path.join(REPO, 'bin', 'agent-harness.js'), ...args], {
          cwd: REPO,
          env,
          encoding: 'utf8',
          stdio: ['ignore', 'pipe', 'pipe'],
          timeout: scaled(120_000),
        });
      const seeded = cli([
        'start',
        '--script',
        script,
        '--template',
        'fixtures/repos/changelog',
        '--file',
        `docs/notes.txt=${path.join(tmp, 'notes.txt')}`,
        'codex',
        'exec',
        '--json',
        'hi',
      ]);
      expect(seeded.stderr).toContain('Completion: completed (done_marker)');
      const runDir = /Run directory: (\S+)/.exec(seeded.stderr)![1]!;
      expect(fs.readFileSync(path.join(runDir, 'docs', 'notes.txt'), 'utf8')).toBe('seeded from a file\n');
      expect(fs.existsSync(path.join(runDir, 'CHANGELOG.md'))).toBe(true);
      expect(fs.existsSync(path.join(runDir, '.git'))).toBe(true);
      const bare = cli(['start', '--script', script, 'codex', 'exec', '--json', 'hi']);
      expect(bare.stderr).toContain('Completion: failed');
      const badFile = cli(['start', '--file', 'no-equals-sign', 'codex', 'exec', '--json', 'hi']);
      expect(badFile.status).toBe(2);
      expect(badFile.stderr).toContain('--file takes DEST=SRC');
    } finally {
      fs.rmSync(tmp, { recursive: true, force: true });
    }
  });
});
