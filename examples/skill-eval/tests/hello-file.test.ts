/**
 * Does the hello-file skill work, and does it help? Five trials per engine with the skill and without it (baseline),
 * a grader over the file the agent wrote, gates on the pass rate and the lift, and a trigger set. Keyless: the scripted
 * model stands in for the vendor. Here the script varies per trial so the outcome is known; against a real model
 * (`model: 'record'` once with a key, then replayed keyless) the trials vary by themselves.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect } from 'vitest';
import { test, turns } from 'agent-harness/vitest';

const WRITE = "printf 'hello from agent-harness\\n' > hello.txt";

describe.for(['codex', 'claude'] as const)('hello-file on %s', (engine) => {
  test('passes most trials with the skill, and the skill helps', async ({ agent }) => {
    const trials = await agent.trials(engine, {
      case: 'greets by file',
      trials: 5,
      concurrency: 4,
      arms: ['with-skill', 'baseline'],
      skill: 'hello-file',
      prompt: 'Greet by file.',
      k: [1, 3],
      // With the skill the stand-in model follows it in 4 trials of 5; without it, in 1.
      script: ({ arm, trial }) =>
        (arm === 'with-skill' ? trial !== 2 : trial < 1)
          ? [turns.useSkill('hello-file'), turns.shell(WRITE), turns.final('hello.txt is written.')]
          : [turns.final('Hello!')],
      check: (run) => expect(run).toHaveChangedFiles(['hello.txt']),
      // A grader: the file says hello (an LLM judge plugs in here the same way, returning a graded verdict).
      grade: (run) => {
        const file = path.join(run.runDir, 'hello.txt');
        const text = fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : '';
        const score = /hello/.test(text) ? 1 : 0;
        const grade = { name: 'says hello', score, reason: score ? 'hello.txt greets' : 'hello.txt does not greet' };
        return { score, threshold: 1, passed: score === 1, grades: [grade], errors: [] };
      },
    });
    expect(trials).toHavePassRate({ atLeast: 0.3, confidence: 0.95 });
    expect(trials).toShowLift({ atLeast: 0.2 });
  });

  test('loads when it should, and only then', async ({ agent }) => {
    const triggers = await agent.triggers(engine, {
      prompts: [
        { prompt: 'Greet by file.', expect: ['hello-file'], script: [turns.useSkill('hello-file'), turns.final('ok')] },
        {
          prompt: 'Please greet me in a file.',
          expect: ['hello-file'],
          script: [turns.useSkill('hello-file'), turns.final('ok')],
        },
        { prompt: 'What is 2 + 2?', expect: [], script: [turns.final('4')] },
      ],
    });
    const skill = triggers.skills.find((s) => s.skill === 'hello-file');
    expect(skill).toMatchObject({ precision: 1, recall: 1 });
    expect(triggers.collisions).toEqual([]);
  });
});
