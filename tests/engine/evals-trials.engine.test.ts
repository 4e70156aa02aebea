/**
 * `agent.trials()` and `agent.triggers()` with the real codex CLI (issue 45 items 1–3, 5): each trial an ordinary
 * audited attempt in its own run directory, run concurrently; a scripted 500 in one trial's first attempt retried and
 * reported as infrastructure, not counted; a baseline arm and its lift; the gates' messages; trigger precision and
 * recall from the load evidence. The script is varied per trial by the test itself (a function of the trial), so the
 * outcome of each trial is known in advance and every number below is checked against it.
 */
import path from 'node:path';
import { describe, expect } from 'vitest';
import { test, turns } from '../../src/public/vitest.js';
import { readTrialRecords } from '../../src/evals/trial-record.js';
import { scaled } from '../helpers/load-scaled.js';

const SKILLS = path.join('fixtures', 'skills');
const WRITE = "printf 'hello from agent-harness\\n' > hello.txt";

describe('trials on codex', () => {
  test('four trials per arm: counted, retried, classified, lifted and gated', { timeout: scaled(300_000) }, async ({
    agent,
    task,
  }) => {
    const trials = await agent.trials('codex', {
      case: 'greets',
      trials: 4,
      concurrency: 4,
      arms: ['with-skill', 'baseline'],
      skill: 'demo-hello',
      skills: [SKILLS],
      prompt: 'Use the demo-hello skill.',
      k: [1, 2],
      // with-skill: trials 0–2 write hello.txt, trial 3 does not; baseline: only trial 0 does. With-skill trial 1's
      // first attempt meets a scripted HTTP 500: an infrastructure failure, retried.
      script: ({ arm, trial, retry }) => {
        if (arm === 'with-skill' && trial === 1 && retry === 0) return [turns.error(500, 'upstream exploded')];
        const writes = arm === 'with-skill' ? trial < 3 : trial === 0;
        return writes
          ? [turns.useSkill('demo-hello'), turns.shell(WRITE), turns.final('done')]
          : [turns.final('I did nothing.')];
      },
      check: (run) => expect(run).toHaveChangedFiles(['hello.txt']),
    });

    const skill = trials.arm('with-skill')!;
    const base = trials.arm('baseline')!;
    expect(skill).toMatchObject({ n: 4, passed: 3, infra_failed: 0, infra_retries: 1, flaky: true, strip: 'PPPF' });
    expect(skill.failures).toEqual([
      expect.objectContaining({ trial: 3, failureClass: 'task', reason: expect.stringContaining('hello.txt') }),
    ]);
    expect(base).toMatchObject({ n: 4, passed: 1, strip: 'PFFF' });
    expect(skill.pass_rate).toBe(0.75);
    expect(skill.ci95[0]).toBeLessThan(0.75);
    expect(skill.ci95[1]).toBeGreaterThan(0.75);
    expect(skill.pass_at_k['2']).toBe(1);
    expect(skill.pass_hat_k['2']).toBe(0.5);
    expect(skill.lift?.diff).toBe(0.5);
    // Trial 1 of with-skill ran another seed after its retry: the arms no longer pair on every trial, no McNemar.
    expect(skill.lift?.mcnemar).toBeUndefined();

    // The retried trial names the run of its failed attempt; every attempt had its own run directory.
    const retried = trials.records.find((r) => r.arm === 'with-skill' && r.trial === 1)!;
    expect(retried.infraRetries).toBe(1);
    expect(retried.retriedAuditDirs).toHaveLength(1);
    const dirs = new Set([...trials.records.map((r) => r.auditDir), ...(retried.retriedAuditDirs ?? [])]);
    expect(dirs.size).toBe(9);
    expect(agent.runs).toHaveLength(9);
    // Trial 3 loaded no skill; trial 0 read demo-hello's SKILL.md.
    expect(trials.records.find((r) => r.arm === 'with-skill' && r.trial === 0)?.skillsLoaded).toEqual(['demo-hello']);
    // Baseline trials had no skill injected at all.
    expect(trials.runs.get('baseline/0')?.skillsInjected).toEqual([]);
    expect(trials.runs.get('with-skill/0')?.skillsInjected).toEqual(['demo-hello']);

    expect(trials).toHavePassRate({ atLeast: 0.5 });
    expect(() => expect(trials).toHavePassRate({ atLeast: 0.5, confidence: 0.95 })).toThrow(
      /case "greets" on codex \(arm with-skill\).*lower bound of its 95\.0% Wilson interval is .*below the bound 50\.0%/,
    );
    expect(trials).toShowLift({ atLeast: 0.5 });
    expect(() => expect(trials).toShowLift({ confidence: 0.95 })).toThrow(
      /case "greets" on codex .*below the bound 0\.0%/,
    );
    // The records are in the test's meta for the reporter.
    expect(readTrialRecords(task.meta)).toHaveLength(8);
  });

  test('trigger precision and recall from what the engine loaded', { timeout: scaled(180_000) }, async ({ agent }) => {
    const result = await agent.triggers('codex', {
      skills: [SKILLS],
      onlySkills: ['demo-hello', 'csv-stats'],
      prompts: [
        {
          prompt: 'Run the agent-harness demo.',
          expect: ['demo-hello'],
          script: [turns.useSkill('demo-hello'), turns.final('ok')],
        },
        { prompt: 'What is 2 + 2?', expect: [], script: [turns.useSkill('csv-stats'), turns.final('4')] },
      ],
    });
    const hello = result.skills.find((s) => s.skill === 'demo-hello')!;
    expect(hello).toMatchObject({ true_positive: 1, false_positive: 0, false_negative: 0, precision: 1, recall: 1 });
    expect(result.skills.find((s) => s.skill === 'csv-stats')).toMatchObject({ false_positive: 1, precision: 0 });
    expect(result.collisions).toEqual([
      expect.objectContaining({ engine: 'codex', expected: null, loaded: 'csv-stats', prompts: ['What is 2 + 2?'] }),
    ]);
  });

  test('bad trial options are CONFIG_INVALID naming the option, before any run', async ({ agent }) => {
    await expect(agent.trials('codex', { trials: 0, prompt: 'x' })).rejects.toMatchObject({
      code: 'CONFIG_INVALID',
      message: expect.stringContaining('agent.trials("codex") trials = 0'),
    });
    await expect(agent.trials('codex', { trials: 2, arms: ['skilled' as never], prompt: 'x' })).rejects.toMatchObject({
      code: 'CONFIG_INVALID',
      message: expect.stringContaining('arms = "skilled"'),
    });
    await expect(agent.trials('codex', { trials: 2, k: [3], prompt: 'x' })).rejects.toMatchObject({
      code: 'CONFIG_INVALID',
      message: expect.stringContaining('k = 3 is larger than the number of trials (n = 2)'),
    });
    await expect(agent.trials('codex', { trials: 2, judge: { rubric: 'r' }, prompt: 'x' })).rejects.toMatchObject({
      code: 'CONFIG_INVALID',
      message: expect.stringContaining('judge.caller'),
    });
    expect(agent.runs).toHaveLength(0);
  });
});
