/**
 * Issue 45's "Done when", end to end on codex and claude, over the seeded probabilistic turns (`turns.branch` and the
 * script's `seed`).
 *
 * A case runs 20 trials over a seeded script whose skill arm writes hello.txt with probability 0.8 and whose baseline
 * arm writes it with probability 0.3; per engine the statistics give n = 20, the passes, a pass rate inside its own 95%
 * interval, pass@k from the unbiased estimator, the flaky flag and the baseline arm's lift; a gate above the interval
 * fails naming case, engine and bound. A rerun of the same seeds gives the same outcomes.
 */
import path from 'node:path';
import { describe, expect } from 'vitest';
import { passAtK } from '../../src/evals/stats.js';
import { type ModelScript, test, turns } from '../../src/public/vitest.js';
import { scaled } from '../helpers/load-scaled.js';

const SKILLS = path.join('fixtures', 'skills');
const WRITE = "printf 'hello from agent-harness\\n' > hello.txt";
const writes = [turns.useSkill('demo-hello'), turns.shell(WRITE), turns.final('done')];
const idles = [turns.final('I did not write it.')];

describe.for(['codex', 'claude'] as const)('done when: 20 seeded trials on %s', (engine) => {
  test('statistics, lift and a failing gate', { timeout: scaled(900_000) }, async ({ agent }) => {
    const trials = await agent.trials(engine, {
      case: 'greets',
      trials: 20,
      concurrency: 4,
      arms: ['with-skill', 'baseline'],
      skill: 'demo-hello',
      skills: [SKILLS],
      prompt: 'Use the demo-hello skill.',
      k: [1, 5],
      script: ({ arm }) =>
        ({ version: 1, seed: 45, turns: [turns.branch(arm === 'baseline' ? 0.3 : 0.8, writes, idles)] }) as ModelScript,
      check: (run) => expect(run).toHaveChangedFiles(['hello.txt']),
    });
    const skill = trials.arm('with-skill')!;
    const base = trials.arm('baseline')!;
    expect(skill.n).toBe(20);
    expect(base.n).toBe(20);
    expect(skill.pass_rate).toBe(skill.passed / 20);
    expect(skill.ci95[0]).toBeLessThanOrEqual(skill.pass_rate!);
    expect(skill.ci95[1]).toBeGreaterThanOrEqual(skill.pass_rate!);
    expect(skill.pass_at_k['5']).toBeCloseTo(passAtK(20, skill.passed, 5), 6);
    expect(skill.flaky).toBe(skill.passed > 0 && skill.passed < 20);
    expect(skill.lift?.diff).toBeCloseTo((skill.passed - base.passed) / 20, 6);
    // The seeds pair the arms trial by trial.
    expect(skill.lift?.mcnemar).toBeDefined();
    // Every trial's seed is the script's plus its index.
    expect(trials.records.filter((r) => r.arm === 'with-skill').map((r) => r.seed)).toEqual(
      Array.from({ length: 20 }, (_, i) => 45 + i),
    );
    const above = Math.min(1, skill.ci95[1] + 0.01);
    expect(() => expect(trials).toHavePassRate({ atLeast: above, confidence: 0.95 })).toThrow(
      new RegExp(`case "greets" on ${engine} \\(arm with-skill\\).*below the bound ${(above * 100).toFixed(1)}%`),
    );
  });
});
