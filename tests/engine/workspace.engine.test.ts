/**
 * A seeded git workspace lets codex run as in a real project: `codex exec` refuses a directory that is not a git
 * repository unless given `--skip-git-repo-check`; with a template the run dir is a repository, so the plain
 * command works.
 */
import { describe, expect } from 'vitest';
import { test, turns } from '../../src/public/vitest.js';

describe('codex in a seeded git workspace', () => {
  test('`codex exec --json` completes without --skip-git-repo-check', async ({ model, agent }) => {
    model.script(turns.shell('git status --porcelain; cat CHANGELOG.md'), turns.final('Looked at the repo.'));
    const run = await agent.start('codex', { template: 'fixtures/repos/changelog', args: ['exec', '--json', 'Look at the changelog.'] });
    expect(run.error).toBeNull();
    expect(run).toHaveCompleted();
    // The agent sees a clean repository: the harness's own paths are excluded from git.
    expect(run.toolCalls[0]).toMatchObject({ exitCode: 0 });
    expect(run.toolCalls[0]?.output).toContain('# Changelog');
    expect(run.toolCalls[0]?.output).not.toMatch(/\?\? \.codex/);
  });

});
