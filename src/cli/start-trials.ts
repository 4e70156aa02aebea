/**
 * `agent-harness start --trials N [--concurrency C] <engine> …` (issue 45 item 1): the same start run N times, each an
 * ordinary audited attempt in its own run directory (a seeded copy of `--script` each, its own cassette in a cassette
 * mode), at most C at once; one line per trial as it ends, then the statistics of src/evals/ (n, passes, pass rate
 * with its Wilson 95% interval, flaky, and the infrastructure and engine failures apart).
 */
import path from 'node:path';
import type { AttemptRequest } from '../core/attempt-request.js';
import type { AttemptResult } from '../core/attempt-result.js';
import { runTrials, type TrialAttempt, type TrialContext } from '../evals/run-trials.js';
import { seedScript, trialSeed } from '../evals/seed-script.js';
import { summarizeTrials, type TrialStatistics } from '../evals/summarize.js';
import { resolveTrialOptions } from '../evals/trial-options.js';
import type { TrialRecord } from '../evals/trial-record.js';
import { AgentHarnessError } from '../errors/index.js';
import type { ModelScript } from '../model/index.js';
import type { TranslateMode } from '../protocol/index.js';
import type { CliStreams } from './output.js';

/** What a trials start needs beyond the shared attempt request. */
export interface StartTrialsInput {
  trials: unknown;
  concurrency?: unknown;
  /** The case's name in the statistics. */
  case: string;
}

const percent = (x: number): string => `${(x * 100).toFixed(1)}%`;

/**
 * The cassette of trial `trial` (rerun `retry`): `name.trial-<i>.json` beside the given one, as the Vitest fixture
 * names its trials' cassettes, so each trial records and replays alone.
 */
export function trialCassettePath(file: string, trial: number, retry: number): string {
  const ext = path.extname(file) || '.json';
  const stem = path.extname(file) ? file.slice(0, -ext.length) : file;
  return `${stem}.trial-${trial}${retry > 0 ? `.retry-${retry}` : ''}${ext}`;
}

/** Why an attempt did not pass a CLI trial (null: it passed: completed, exit status 0, no harness error). */
function attemptFailure(result: AttemptResult): Error | null {
  if (result.error) return new Error(`${result.error.code}: ${result.error.message}`);
  if (result.completion.state !== 'completed')
    return new Error(
      `the attempt ended ${result.completion.state}${result.completion.code ? ` (${result.completion.code})` : ''}${result.completion.reason ? `: ${result.completion.reason}` : ''}`,
    );
  if (result.exitCode !== 0) return new Error(`the engine exited with status ${result.exitCode}`);
  return null;
}

/** One trial's line: its index, arm, outcome (with the classified cause of a failure) and its run. */
export function formatTrialLine(record: TrialRecord, total: number): string {
  const cause =
    record.outcome === 'passed'
      ? 'passed'
      : `${record.outcome === 'failed' ? 'failed' : 'excluded'} (${record.failureClass ?? 'task'}${record.failureCode ? ` ${record.failureCode}` : ''}${record.reason ? `: ${record.reason}` : ''})`;
  const retries = record.infraRetries > 0 ? `, after ${record.infraRetries} infrastructure rerun(s)` : '';
  const run = record.handle ? ` run ${record.handle} ${record.auditDir ? path.dirname(record.auditDir) : ''}` : '';
  return `trial ${record.trial + 1}/${total} ${record.arm}: ${cause}${retries};${run}`.trimEnd();
}

/** The statistics lines of one case × engine × arm. */
export function formatTrialStatistics(row: TrialStatistics): string[] {
  const rate =
    row.pass_rate === null
      ? 'pass rate n/a (no trial counted)'
      : `pass rate ${percent(row.pass_rate)}, 95% Wilson interval [${percent(row.ci95[0])}, ${percent(row.ci95[1])}]`;
  const passAtK = Object.entries(row.pass_at_k)
    .map(([k, v]) => `pass@${k} ${percent(v)}`)
    .join(', ');
  return [
    `Trials: ${row.case} on ${row.engine} (${row.arm}): n=${row.n}, passed=${row.passed}, ${rate}${passAtK ? `, ${passAtK}` : ''}${row.flaky ? ', flaky' : ''}`,
    `  apart from the rate: ${row.infra_failed} infrastructure failure(s) (${row.infra_retries} rerun), ${row.engine_failed} engine failure(s)`,
    `  strip: ${row.strip}`,
  ];
}

/**
 * Runs the trials of a start and prints them; returns the exit status: 0 when every trial passed, 1 otherwise (a
 * failed or excluded trial), 2 for bad options.
 */
export async function runStartTrials(
  streams: CliStreams,
  request: AttemptRequest & { translateMode: TranslateMode },
  input: StartTrialsInput,
): Promise<number> {
  const resolved = resolveTrialOptions(
    {
      trials: input.trials as number,
      ...(input.concurrency !== undefined ? { concurrency: input.concurrency as number } : {}),
    },
    '--',
  );
  if (request.run)
    throw new AgentHarnessError(
      'USAGE_ERROR',
      '--trials runs each trial in its own new run directory; it cannot add them to --run-dir. Drop one of the two.',
    );
  if (request.io === 'pty')
    throw new AgentHarnessError('USAGE_ERROR', '--trials runs headless attempts side by side; drop --pty.');
  const { runAttempt } = await import('../core/run-attempt.js');
  const { loadModelScript } = await import('../model/script.js');
  const given = request.script;
  const base: ModelScript | null = typeof given === 'string' ? await loadModelScript(given) : null;
  const runTrial = async (context: TrialContext): Promise<TrialAttempt> => {
    const seed = base ? trialSeed(base, context.seedOffset) : null;
    try {
      const result = await runAttempt({
        ...request,
        io: 'split',
        earlyInit: null,
        ...(base ? { script: seedScript(base, context.seedOffset) } : {}),
        ...(request.cassette
          ? {
              cassette: {
                ...request.cassette,
                path: trialCassettePath(request.cassette.path, context.trial, context.retry),
              },
            }
          : {}),
      });
      return {
        result,
        seed,
        checkError: attemptFailure(result),
        ...(request.cassette
          ? { cassette: trialCassettePath(request.cassette.path, context.trial, context.retry) }
          : {}),
      };
    } catch (thrown) {
      return { result: null, seed, checkError: null, thrown };
    }
  };
  const records = await runTrials({
    ...resolved,
    case: input.case,
    engine: request.engine,
    runTrial,
    onTrial: (record) => streams.stdout.write(`${formatTrialLine(record, resolved.trials)}\n`),
  });
  for (const row of summarizeTrials(records, { k: resolved.k }))
    streams.stdout.write(`${formatTrialStatistics(row).join('\n')}\n`);
  return records.every((r) => r.outcome === 'passed') ? 0 : 1;
}
