/**
 * The options of a set of trials, shared by the Vitest fixture, the providers and the CLI, and their checks: a bad
 * value is CONFIG_INVALID naming the option (issue 45: `trials` 0, negative or not an integer, an unknown arm, a judge
 * without a caller, k > n).
 */
import { AgentHarnessError } from '../errors/index.js';
import { checkK } from './stats.js';
import { ARMS, type Arm } from './trial-record.js';

/** Default bound on the trials of one case running at once. */
export const DEFAULT_TRIAL_CONCURRENCY = 4;
/** Default number of times a trial that failed on the infrastructure is run again. */
export const DEFAULT_MAX_INFRA_RETRIES = 2;

/** How many trials, in which arms, how many at once. */
export interface TrialOptions {
  /** Trials per arm (a whole number >= 1). */
  trials: number;
  /** Trials running at once (default 4, never more than the trials). */
  concurrency?: number;
  /** Arms to run (default `['with-skill']`): `with-skill`, `baseline` (no skill), `all-skills`. */
  arms?: readonly Arm[];
  /** The k of pass@k and pass^k to report (each 1 <= k <= trials; default [1]). */
  k?: readonly number[];
  /** Reruns of a trial that failed on the infrastructure (default 2). */
  maxInfraRetries?: number;
  /**
   * The index of the first trial (default 0): trials firstTrial..firstTrial+trials-1 run, so one case's trials can be
   * spread over test files (and so over `vitest --shard` machines) and still be one row of statistics.
   */
  firstTrial?: number;
  /** An LLM judge: it needs the caller it grades through. */
  judge?: { caller?: unknown } & Record<string, unknown>;
}

/** Trial options after checks and defaults. */
export interface ResolvedTrialOptions {
  trials: number;
  concurrency: number;
  arms: Arm[];
  k: number[];
  maxInfraRetries: number;
  firstTrial: number;
}

function invalid(option: string, value: unknown, why: string): AgentHarnessError {
  return new AgentHarnessError(
    'CONFIG_INVALID',
    `${option} = ${JSON.stringify(value) ?? String(value)} is invalid: ${why}`,
    { details: { field: option } },
  );
}

function wholeNumber(option: string, value: unknown, min: number): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min)
    throw invalid(option, value, `${option} is a whole number of at least ${min}.`);
  return value;
}

/** Checks trial options (`where` prefixes the option names: `agent.trials()`, `--trials`). */
export function resolveTrialOptions(options: TrialOptions, where = ''): ResolvedTrialOptions {
  const name = (option: string) => `${where}${option}`;
  const trials = wholeNumber(name('trials'), options.trials, 1);
  const concurrency = Math.min(
    trials,
    options.concurrency === undefined
      ? DEFAULT_TRIAL_CONCURRENCY
      : wholeNumber(name('concurrency'), options.concurrency, 1),
  );
  const arms = [...(options.arms ?? ['with-skill'])];
  if (arms.length === 0) throw invalid(name('arms'), arms, `name at least one arm of ${ARMS.join(', ')}.`);
  for (const arm of arms)
    if (!(ARMS as readonly string[]).includes(arm))
      throw invalid(name('arms'), arm, `unknown arm; the arms are ${ARMS.join(', ')}.`);
  if (new Set(arms).size !== arms.length) throw invalid(name('arms'), arms, 'an arm is named twice.');
  const k = [...(options.k ?? [1])];
  for (const value of k) checkK(value, trials, name('k'));
  const maxInfraRetries =
    options.maxInfraRetries === undefined
      ? DEFAULT_MAX_INFRA_RETRIES
      : wholeNumber(name('maxInfraRetries'), options.maxInfraRetries, 0);
  if (
    options.judge !== undefined &&
    (options.judge === null || typeof options.judge !== 'object' || !options.judge.caller)
  )
    throw invalid(
      name('judge.caller'),
      undefined,
      'a judge grades through an LLM caller: pass judge.caller (an OpenAI-compatible or Anthropic caller from agent-harness/orchestrator, or a scripted one).',
    );
  const firstTrial = options.firstTrial === undefined ? 0 : wholeNumber(name('firstTrial'), options.firstTrial, 0);
  return { trials, concurrency, arms, k: [...new Set(k)].sort((a, b) => a - b), maxInfraRetries, firstTrial };
}
