import { describe, expect } from 'vitest';
import { test, turns } from 'agent-harness/vitest';

// The same case on every engine: Vitest prints one line per engine (%s), and the report's matrix compares them.
describe.for(['codex', 'claude', 'gemini', 'opencode'] as const)('%s', (engine) => {
  test('csv-stats summarizes data.csv into stats.json, then a resumed turn records it in the changelog', async ({
    model,
    agent,
  }) => {
    // The model's side of the conversation: load the skill, write stats.json, say so.
    model.script(
      turns.useSkill('csv-stats'),
      turns.shell(`printf '{"rows": 3, "sum": 7}' > stats.json`),
      turns.final('Wrote stats.json: 3 rows, sum 7.'),
    );
    const run = await agent.start(engine, {
      prompt: 'Use the csv-stats skill on data.csv.',
      template: 'fixtures/repo', // a git repo with CHANGELOG.md and data.csv, committed before the agent starts
      files: { 'notes/context.txt': 'data.csv comes from the nightly export\n' },
      onlySkills: ['csv-stats'],
    });
    expect(run).toHaveCompleted();
    expect(run).toHaveOfferedSkill('csv-stats');
    expect(run).not.toHaveOfferedSkill('changelog-entry');
    expect(run).toHaveUsedSkill('csv-stats');
    // Normalized across engines: the command as written, a numeric exit code.
    expect(run).toHaveCalledTool({ command: /> stats\.json$/, exitCode: 0 });
    // Exactly the agent's work: the seeded files are not "created", engine bookkeeping is listed apart.
    expect(run).toHaveChangedExactly(['stats.json']);
    expect(run).toHaveLeftUnchanged(['data.csv', 'CHANGELOG.md']);
    expect(run.finalText).toBe('Wrote stats.json: 3 rows, sum 7.');

    // The next user message, with the model's next turns (numbered after the ones the session used).
    await run.resume('Record it in the changelog.', {
      turns: [
        turns.shell(`printf -- '- Added stats.json.\\n' >> CHANGELOG.md`),
        turns.final('Added a changelog entry.'),
      ],
    });
    expect(run.last.attempt).toBe(2);
    expect(run).toHaveCompleted();
    expect(run).toHaveChangedExactly(['CHANGELOG.md']);
  });

  // Off by default: the engine test of this example turns it on to see how a failure reads in the report.
  test.runIf(process.env.SHOW_A_FAILURE === '1')(
    'a failing shell call shows up in the report',
    async ({ model, agent }) => {
      model.script(turns.shell('cat missing.csv'), turns.final('Could not read it.'));
      const run = await agent.start(engine, { prompt: 'Read missing.csv.', onlySkills: ['csv-stats'] });
      expect(run).toHaveCalledTool({ command: 'cat missing.csv', exitCode: 0 });
    },
  );
});
