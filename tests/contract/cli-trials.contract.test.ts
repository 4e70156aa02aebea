/**
 * `agent-harness start --trials N`: bad trial options are CONFIG_INVALID naming the option before any engine starts,
 * `--concurrency` alone is a usage error, the help teaches the option, and the trial and statistics lines say what
 * the records say (the classified cause and the run of a failed trial).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { formatTrialLine, formatTrialStatistics, trialCassettePath } from '../../src/cli/start-trials.js';
import { summarizeTrials } from '../../src/evals/summarize.js';
import type { TrialRecord } from '../../src/evals/trial-record.js';
import { createCliSandbox, runCliProcess, type CliSandbox } from '../helpers/cli.js';

const sandboxes: CliSandbox[] = [];
afterEach(() => {
  for (const sandbox of sandboxes.splice(0)) sandbox.cleanup();
});

function cli(args: string[]) {
  const sandbox = createCliSandbox();
  sandboxes.push(sandbox);
  return runCliProcess(sandbox, args);
}

describe('start --trials', () => {
  it.each([
    [['--trials', '0'], '--trials = 0 is invalid'],
    [['--trials', '-3'], '--trials = -3 is invalid'],
    [['--trials', '1.5'], '--trials = 1.5 is invalid'],
    [['--trials', 'many'], '--trials = "many" is invalid'],
    [['--trials', '2', '--concurrency', '0'], '--concurrency = 0 is invalid'],
  ])('%j is CONFIG_INVALID naming the option, and no run is made', (options, message) => {
    const run = cli(['start', ...options, '--prompt', 'hi', 'codex']);
    expect(run.status).toBe(2);
    expect(run.stderr).toContain('CONFIG_INVALID');
    expect(run.stderr).toContain(message);
    expect(run.stdout).not.toMatch(/^trial /m);
  });

  it('--concurrency without --trials is a usage error', () => {
    const run = cli(['start', '--concurrency', '2', '--prompt', 'hi', 'codex']);
    expect(run.status).toBe(2);
    expect(run.stderr).toContain('USAGE_ERROR');
    expect(run.stderr).toContain('--concurrency bounds the trials of --trials N');
  });

  it('the help teaches --trials and --concurrency', () => {
    const run = cli(['start', '--help']);
    expect(run.status).toBe(0);
    expect(run.stdout).toMatch(/--trials <n>\s+run the start N times/);
    expect(run.stdout).toMatch(/--concurrency <c>\s+with --trials/);
    expect(run.stdout).toContain('agent-harness start --trials 10 --concurrency 2');
    expect(run.stdout).toContain('Wilson 95% interval');
  });

  it('a trial line gives the outcome, the classified cause of a failure and the run; the statistics their rows', () => {
    const base = {
      case: 'hi',
      engine: 'codex',
      arm: 'with-skill' as const,
      seed: null,
      infraRetries: 0,
      durationMs: 1,
      tokens: null,
      costUsd: null,
    };
    const records: TrialRecord[] = [
      { ...base, trial: 0, outcome: 'passed', runId: 'r0', handle: 'aaaa', auditDir: '/runs/a/.audit' },
      {
        ...base,
        trial: 1,
        outcome: 'failed',
        failureClass: 'task',
        reason: 'the attempt ended awaiting_input',
        runId: 'r1',
        handle: 'bbbb',
        auditDir: '/runs/b/.audit',
      },
      {
        ...base,
        trial: 2,
        outcome: 'excluded',
        failureClass: 'infrastructure',
        failureCode: 'ENGINE_RATE_LIMITED',
        infraRetries: 2,
        runId: 'r2',
        handle: 'cccc',
        auditDir: '/runs/c/.audit',
      },
    ];
    expect(records.map((r) => formatTrialLine(r, 3))).toEqual([
      'trial 1/3 with-skill: passed; run aaaa /runs/a',
      'trial 2/3 with-skill: failed (task: the attempt ended awaiting_input); run bbbb /runs/b',
      'trial 3/3 with-skill: excluded (infrastructure ENGINE_RATE_LIMITED), after 2 infrastructure rerun(s); run cccc /runs/c',
    ]);
    const [row] = summarizeTrials(records);
    expect(formatTrialStatistics(row!)).toEqual([
      'Trials: hi on codex (with-skill): n=2, passed=1, pass rate 50.0%, 95% Wilson interval [9.5%, 90.5%], pass@1 50.0%, flaky',
      '  apart from the rate: 1 infrastructure failure(s) (2 rerun), 0 engine failure(s)',
      '  strip: PFX',
    ]);
  });

  it("each trial's cassette is its own file beside the given one", () => {
    expect(trialCassettePath('c/hi.json', 3, 0)).toBe('c/hi.trial-3.json');
    expect(trialCassettePath('c/hi.json', 3, 1)).toBe('c/hi.trial-3.retry-1.json');
    expect(trialCassettePath('c/hi', 0, 0)).toBe('c/hi.trial-0.json');
  });
});
