/**
 * The evals statistics (src/evals/): Wilson interval, unbiased pass@k and pass^k, Newcombe's lift interval, McNemar's
 * exact test, the summary per case × engine × arm, trigger precision and recall, gates, the baseline comparison and the
 * trial options' checks. Known values from the literature, plus properties over random counts (fast-check).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  checkLift,
  checkPassRate,
  classifyFailure,
  compareTrialStatistics,
  mcnemarExact,
  newcombeInterval,
  passAtK,
  passHatK,
  resolveTrialOptions,
  summarizeTrials,
  summarizeTriggers,
  type TrialRecord,
  wilsonInterval,
} from '../../src/evals/index.js';
import { expectHarnessError } from '../helpers/errors.js';

const counts = fc.integer({ min: 0, max: 60 }).chain((n) => fc.tuple(fc.constant(n), fc.integer({ min: 0, max: n })));

function record(over: Partial<TrialRecord> & Pick<TrialRecord, 'trial' | 'outcome'>): TrialRecord {
  return {
    case: 'c',
    engine: 'codex',
    arm: 'with-skill',
    seed: over.trial,
    infraRetries: 0,
    runId: null,
    handle: null,
    auditDir: null,
    durationMs: 10,
    tokens: null,
    costUsd: null,
    ...over,
  };
}

describe('Wilson interval', () => {
  it('matches published values', () => {
    // Newcombe (1998) table I: 81/263 → 0.2553–0.3662; 15/148 → 0.0624–0.1605; 0/20 → 0–0.1611.
    const a = wilsonInterval(81, 263);
    expect(a.low).toBeCloseTo(0.2553, 4);
    expect(a.high).toBeCloseTo(0.3662, 4);
    const b = wilsonInterval(15, 148);
    expect(b.low).toBeCloseTo(0.0624, 4);
    expect(b.high).toBeCloseTo(0.1605, 4);
    const c = wilsonInterval(0, 20);
    expect(c.low).toBe(0);
    expect(c.high).toBeCloseTo(0.1611, 4);
    expect(wilsonInterval(0, 0)).toEqual({ low: 0, high: 1 });
  });

  it('holds the point rate, stays in [0, 1], and narrows with confidence', () => {
    fc.assert(
      fc.property(counts, ([n, c]) => {
        const w = wilsonInterval(c, n);
        const rate = n === 0 ? 0.5 : c / n;
        expect(w.low).toBeGreaterThanOrEqual(0);
        expect(w.high).toBeLessThanOrEqual(1);
        expect(w.low).toBeLessThanOrEqual(rate + 1e-12);
        expect(w.high).toBeGreaterThanOrEqual(rate - 1e-12);
        const narrow = wilsonInterval(c, n, 0.8);
        expect(narrow.high - narrow.low).toBeLessThanOrEqual(w.high - w.low + 1e-12);
      }),
    );
  });
});

describe('pass@k and pass^k', () => {
  it('pass@k is Chen et al.’s 1 - C(n-c,k)/C(n,k)', () => {
    const choose = (n: number, k: number): number => {
      let r = 1;
      for (let i = 1; i <= k; i++) r = (r * (n - k + i)) / i;
      return r;
    };
    fc.assert(
      fc.property(
        counts
          .filter(([n]) => n > 0)
          .chain(([n, c]) => fc.tuple(fc.constant(n), fc.constant(c), fc.integer({ min: 1, max: n }))),
        ([n, c, k]) => {
          expect(passAtK(n, c, k)).toBeCloseTo(1 - choose(n - c, k) / choose(n, k), 9);
          expect(passHatK(n, c, k)).toBeCloseTo(choose(c, k) / choose(n, k), 9);
          // pass@1 and pass^1 are the pass rate; pass^k <= rate <= pass@k.
          expect(passAtK(n, c, 1)).toBeCloseTo(c / n, 12);
          expect(passHatK(n, c, k)).toBeLessThanOrEqual(c / n + 1e-12);
          expect(passAtK(n, c, k)).toBeGreaterThanOrEqual(c / n - 1e-12);
        },
      ),
    );
  });

  it('k > n is CONFIG_INVALID naming k', () => {
    expectHarnessError(() => passAtK(3, 1, 5), 'CONFIG_INVALID', /k = 5 is larger than the number of trials \(n = 3\)/);
    expectHarnessError(() => passHatK(3, 1, 0), 'CONFIG_INVALID', /k = 0/);
  });
});

describe('lift and the paired test', () => {
  it("Newcombe's hybrid score interval matches his published example", () => {
    // Newcombe (1998) method 10: 56/70 - 48/80 = 0.2000, interval 0.0524–0.3339.
    const lift = newcombeInterval({ passes: 56, n: 70 }, { passes: 48, n: 80 });
    expect(lift.diff).toBeCloseTo(0.2, 6);
    expect(lift.low).toBeCloseTo(0.0524, 3);
    expect(lift.high).toBeCloseTo(0.3339, 3);
  });

  it('the interval holds the difference and is antisymmetric', () => {
    fc.assert(
      fc.property(
        counts.filter(([n]) => n > 0),
        counts.filter(([n]) => n > 0),
        ([n1, c1], [n2, c2]) => {
          const ab = newcombeInterval({ passes: c1, n: n1 }, { passes: c2, n: n2 });
          const ba = newcombeInterval({ passes: c2, n: n2 }, { passes: c1, n: n1 });
          expect(ab.low).toBeLessThanOrEqual(ab.diff + 1e-12);
          expect(ab.high).toBeGreaterThanOrEqual(ab.diff - 1e-12);
          expect(ab.low).toBeCloseTo(-ba.high, 9);
          expect(ab.high).toBeCloseTo(-ba.low, 9);
        },
      ),
    );
  });

  it("McNemar's exact test counts only discordant pairs", () => {
    // 8 pairs where only A passed, 1 where only B did: p = 2 · P(X <= 1 | 9, 1/2) = 2 · 10/512.
    const pairs: Array<[boolean, boolean]> = [
      ...Array.from({ length: 8 }, () => [true, false] as [boolean, boolean]),
      [false, true],
      [true, true],
      [false, false],
    ];
    const test = mcnemarExact(pairs);
    expect(test).toMatchObject({ onlyA: 8, onlyB: 1 });
    expect(test.p).toBeCloseTo(20 / 512, 12);
    expect(mcnemarExact([[true, true]]).p).toBe(1);
  });
});

describe('summary per case × engine × arm', () => {
  const trials = [
    record({ trial: 0, outcome: 'passed', tokens: 100 }),
    record({ trial: 1, outcome: 'failed', failureClass: 'task', reason: 'no out.txt', auditDir: '/r/1/.audit' }),
    record({
      trial: 2,
      outcome: 'excluded',
      failureClass: 'infrastructure',
      infraRetries: 2,
      failureCode: 'ENGINE_RATE_LIMITED',
    }),
    record({ trial: 3, outcome: 'passed', tokens: 50 }),
    record({ arm: 'baseline', trial: 0, outcome: 'failed', failureClass: 'task' }),
    record({ arm: 'baseline', trial: 1, outcome: 'failed', failureClass: 'task' }),
    record({ arm: 'baseline', trial: 3, outcome: 'passed' }),
  ];

  it('counts, excludes infrastructure, and gives the lift over the baseline', () => {
    const rows = summarizeTrials(trials, { k: [1, 2] });
    expect(rows.map((r) => r.arm)).toEqual(['baseline', 'with-skill']);
    const skill = rows[1]!;
    expect(skill).toMatchObject({
      n: 3,
      passed: 2,
      infra_failed: 1,
      infra_retries: 2,
      flaky: true,
      tokens: 150,
      strip: 'PFXP',
    });
    expect(skill.pass_rate).toBeCloseTo(2 / 3, 5);
    expect(skill.pass_at_k['2']).toBeCloseTo(1, 6);
    expect(skill.pass_hat_k['2']).toBeCloseTo(1 / 3, 5);
    expect(skill.failures.map((f) => [f.trial, f.failureClass])).toEqual([
      [1, 'task'],
      [2, 'infrastructure'],
    ]);
    expect(skill.lift?.diff).toBeCloseTo(2 / 3 - 1 / 3, 5);
    // Trials 0, 1, 3 of both arms ran the same seeds: paired.
    expect(skill.lift?.mcnemar).toMatchObject({ onlyA: 1, onlyB: 0 });
  });

  it('is the same whatever the order of the records (a merged shard run)', () => {
    fc.assert(
      fc.property(fc.shuffledSubarray(trials, { minLength: trials.length, maxLength: trials.length }), (shuffled) => {
        expect(summarizeTrials(shuffled, { k: [1, 2] })).toEqual(summarizeTrials(trials, { k: [1, 2] }));
      }),
    );
  });
});

describe('failure classification', () => {
  it('classifies from codes, categories and messages', () => {
    expect(classifyFailure({ completion: { state: 'failed', code: 'ENGINE_RATE_LIMITED' } }).failureClass).toBe(
      'infrastructure',
    );
    expect(classifyFailure({ completion: { state: 'failed', code: 'ENGINE_TIMEOUT' } }).failureClass).toBe('engine');
    expect(classifyFailure({ completion: { state: 'failed', code: 'MODEL_SCRIPT_EXHAUSTED' } }).failureClass).toBe(
      'model',
    );
    expect(
      classifyFailure({
        completion: { state: 'failed', reason: 'turn failed' },
        fcmp: [
          {
            type: 'conversation.failed',
            data: {
              category: 'unknown',
              code: 'ENGINE_FAILED',
              message: 'unexpected status 500 Internal Server Error',
            },
          },
        ],
      }).failureClass,
    ).toBe('infrastructure');
    // codex's words for a 500 name no status.
    expect(
      classifyFailure({
        completion: { state: 'failed', reason: 'turn_failed', code: 'ENGINE_TURN_FAILED' },
        fcmp: [
          {
            type: 'conversation.failed',
            data: {
              category: 'unknown',
              code: 'ENGINE_TURN_FAILED',
              message: 'We’re currently experiencing high demand, which may cause temporary errors.',
            },
          },
        ],
      }).failureClass,
    ).toBe('infrastructure');
    expect(
      classifyFailure({
        completion: { state: 'failed', reason: 'x' },
        fcmp: [{ type: 'conversation.failed', data: { category: 'protocol', code: 'X', message: 'bad frame' } }],
      }).failureClass,
    ).toBe('engine');
    expect(
      classifyFailure({ completion: { state: 'awaiting_input' }, assistantMessages: [], toolCalls: [] }).failureClass,
    ).toBe('model');
    expect(
      classifyFailure({ completion: { state: 'completed' }, assistantMessages: ['done'], toolCalls: [] }).failureClass,
    ).toBe('task');
  });
});

describe('trigger precision and recall', () => {
  it('counts loads against labels and names routing collisions', () => {
    const base = { case: 't', engine: 'codex', auditDir: null };
    const summary = summarizeTriggers([
      { ...base, prompt: 'stats of a.csv', expected: ['csv-stats'], loaded: ['csv-stats'] },
      { ...base, prompt: 'stats of b.csv', expected: ['csv-stats'], loaded: [] },
      { ...base, prompt: 'say hello', expected: ['demo-hello'], loaded: ['csv-stats'] },
      { ...base, prompt: 'what time is it', expected: [], loaded: [] },
    ]);
    const csv = summary.skills.find((s) => s.skill === 'csv-stats')!;
    expect(csv).toMatchObject({
      true_positive: 1,
      false_positive: 1,
      false_negative: 1,
      true_negative: 1,
      precision: 0.5,
      recall: 0.5,
    });
    expect(csv.recall_ci95[0]).toBeGreaterThan(0);
    expect(summary.collisions).toEqual([
      { case: 't', engine: 'codex', expected: 'demo-hello', loaded: 'csv-stats', count: 1, prompts: ['say hello'] },
    ]);
  });
});

describe('gates', () => {
  const [row] = summarizeTrials(
    Array.from({ length: 20 }, (_, i) => record({ trial: i, outcome: i < 17 ? 'passed' : 'failed' })),
  );
  it('holds the point rate, or the lower bound with a confidence, naming case, engine and bound', () => {
    expect(checkPassRate(row!, { atLeast: 0.8 }).pass).toBe(true);
    const gate = checkPassRate(row!, { atLeast: 0.8, confidence: 0.95 });
    expect(gate.pass).toBe(false);
    expect(gate.message).toMatch(
      /case "c" on codex \(arm with-skill\).*Wilson interval is 64\.0%.*below the bound 80\.0%/,
    );
    expectHarnessError(() => checkPassRate(row!, { atLeast: 2 }), 'CONFIG_INVALID', /atLeast = 2/);
    expectHarnessError(
      () => checkPassRate(row!, { atLeast: 0.5, confidence: 95 }),
      'CONFIG_INVALID',
      /confidence = 95/,
    );
  });
  it('holds the lift, and says when there is no baseline', () => {
    const [base] = summarizeTrials(
      Array.from({ length: 20 }, (_, i) => record({ arm: 'baseline', trial: i, outcome: i < 5 ? 'passed' : 'failed' })),
    );
    expect(checkLift(row!, base, { atLeast: 0.2, confidence: 0.95 }).pass).toBe(true);
    expect(checkLift(row!, base, { atLeast: 0.6 }).message).toMatch(
      /lift over baseline 60\.0%.*at least the bound 60\.0%/,
    );
    expect(checkLift(row!, undefined, {}).message).toMatch(/no baseline arm ran/);
  });
});

describe('comparing two runs', () => {
  const rows = (passes: number, n: number) =>
    summarizeTrials(
      Array.from({ length: n }, (_, i) => record({ trial: i, outcome: i < passes ? 'passed' : 'failed' })),
    );
  it('a significant fall is a regression; a small sample is too thin to tell', () => {
    expect(compareTrialStatistics(rows(19, 20), rows(6, 20))[0]).toMatchObject({ verdict: 'regression' });
    const thin = compareTrialStatistics(rows(3, 3), rows(1, 3))[0]!;
    expect(thin.verdict).toBe('too-thin');
    expect(thin.message).toMatch(/too thin to tell.*run more trials/);
    expect(compareTrialStatistics(rows(18, 20), rows(19, 20))[0]!.verdict).not.toBe('regression');
  });
});

describe('trial options', () => {
  it('rejects bad input with CONFIG_INVALID naming the option', () => {
    for (const trials of [0, -1, 2.5, '3'])
      expectHarnessError(
        () => resolveTrialOptions({ trials } as never, 'agent.trials() '),
        'CONFIG_INVALID',
        /agent\.trials\(\) trials = /,
      );
    expectHarnessError(
      () => resolveTrialOptions({ trials: 3, arms: ['skilled' as never] }),
      'CONFIG_INVALID',
      /arms = "skilled".*with-skill, baseline, all-skills/,
    );
    expectHarnessError(
      () => resolveTrialOptions({ trials: 3, k: [4] }),
      'CONFIG_INVALID',
      /k = 4 is larger than the number of trials \(n = 3\)/,
    );
    expectHarnessError(
      () => resolveTrialOptions({ trials: 3, judge: { rubric: 'x' } }),
      'CONFIG_INVALID',
      /judge\.caller/,
    );
    expectHarnessError(() => resolveTrialOptions({ trials: 3, concurrency: 0 }), 'CONFIG_INVALID', /concurrency = 0/);
    expect(resolveTrialOptions({ trials: 3 })).toEqual({
      trials: 3,
      concurrency: 3,
      arms: ['with-skill'],
      k: [1],
      maxInfraRetries: 2,
      firstTrial: 0,
    });
  });
});

describe('report --baseline over trial statistics', () => {
  it('flags a significant fall as a regression and says when the evidence is too thin', async () => {
    const { buildConsistencyReport } = await import('../../src/report/build.js');
    const { diffAgainstBaseline } = await import('../../src/report/baseline.js');
    const reportOf = (passes: Record<string, [number, number]>) =>
      buildConsistencyReport(
        [
          {
            id: 't',
            name: 't',
            fullName: 't',
            project: '',
            file: 'a.test.ts',
            state: 'passed',
            durationMs: 1,
            retryCount: 0,
            flaky: false,
            errors: [],
            meta: undefined,
            trials: Object.entries(passes).flatMap(([name, [passed, n]]) =>
              Array.from({ length: n }, (_, i) =>
                record({ case: name, trial: i, outcome: i < passed ? 'passed' : 'failed' }),
              ),
            ),
          },
        ],
        'passed',
      );
    const diff = diffAgainstBaseline(
      reportOf({ big: [6, 20], small: [1, 3] }),
      reportOf({ big: [19, 20], small: [3, 3] }),
    );
    expect(diff.regressions).toEqual([
      expect.stringMatching(
        /^trials: case "big" on codex \(arm with-skill\): pass rate fell 65\.0% \(19\/20 → 6\/20\), significant/,
      ),
    ]);
    expect(diff.changes).toEqual([
      expect.stringMatching(/^trials: case "small" on codex .*3\/3 → 1\/3; the evidence is too thin to tell/),
    ]);
  });
});
