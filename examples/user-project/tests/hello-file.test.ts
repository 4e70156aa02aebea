import { describe, expect } from 'vitest';
import { test, turns } from 'agent-harness/vitest';

describe.for(['codex'] as const)('%s', (engine) => {
  test('the hello-file skill writes greeting.txt', async ({ model, agent }) => {
    model.script(turns.shell("printf 'hello from my skill\\n' > greeting.txt"), turns.final('Wrote greeting.txt.'));
    const run = await agent.start(engine, { prompt: 'Use the hello-file skill.' });
    expect(run).toHaveCompleted();
    expect(run).toHaveCalledTool('shell');
    expect(run).toHaveChangedFiles(['greeting.txt']);
    expect(run).toHaveFinalMessage(/greeting\.txt/);
    // The skill reached the model: codex lists project skills in its request.
    expect(JSON.stringify(model.requests[0]?.body)).toContain('hello-file');
  });
});
