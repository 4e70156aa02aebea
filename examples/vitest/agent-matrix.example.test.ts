/**
 * Example: one case on several engines. The reporter groups tests by name with the engine removed and flags
 * engines that disagree (consistency.md, "Engine matrix"). Engines not enabled in agentHarness({ engines })
 * are skipped by `agent.start`.
 */
import { describe, expect } from 'vitest';
import { test, turns } from 'agent-harness/vitest';

describe.for(['codex', 'iflow'] as const)('%s', (engine) => {
  test('writes hello.txt', async ({ model, agent }) => {
    model.script(turns.shell("printf 'hello\\n' > hello.txt"), turns.final('Wrote hello.txt.'));
    const run = await agent.start(engine, { prompt: 'Write hello.txt.' });
    expect(run).toHaveCompleted();
    expect(run).toHaveCalledTool('shell');
    expect(run).toHaveChangedFiles(['hello.txt']);
    expect(run).toHaveFinalMessage(/hello\.txt/);
  });
});
