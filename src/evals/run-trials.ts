/**
 * The trial runner (issue 45 item 1), independent of how an attempt is made: it runs trial 0..n-1 of each arm with at
 * most `concurrency` at once, reruns a trial that failed on the infrastructure up to `maxInfraRetries` times, and
 * turns each into a {@link TrialRecord}. The Vitest fixture, the providers and the CLI give it their own `runTrial`.
 */
import { AgentHarnessError } from '../errors/index.js';
import { type AttemptEvidence, classifyFailure, classOfCode } from './classify.js';
import type { FailureClass, GradedTrial } from './grade.js';
import type { ResolvedTrialOptions } from './trial-options.js';
import type { Arm, TrialRecord } from './trial-record.js';
import { mapAtMost } from '../runtime/map-at-most.js';

/** What one attempt of a trial is told. */
export interface TrialContext {
  arm: Arm;
  /** Trial index, 0-based. */
  trial: number;
  /** Infrastructure reruns before this attempt of the trial (0 for the first). */
  retry: number;
  /**
   * The seed offset: trial + retry × {@link RETRY_SEED_STRIDE}. A scripted case runs seed = (script.seed ?? 0) + offset,
   * so trials differ, a rerun of the whole set is identical, and trial i of two arms pairs (same seed) unless one was
   * retried.
   */
  seedOffset: number;
}

/** How far apart the seeds of a trial's infrastructure reruns are (far beyond any trial index). */
export const RETRY_SEED_STRIDE = 100_000;

/** What one attempt of a trial gave back. */
export interface TrialAttempt {
  /** The attempt (null when it threw before there was one: see `thrown`). */
  result:
    | (AttemptEvidence & {
        runId: string;
        handle: string;
        durationMs: number;
        usage?: { input_tokens: number | null; output_tokens: number | null } | null;
        audit: { dir: string };
      })
    | null;
  /** The seed the attempt's script ran with (null: not scripted). */
  seed: number | null;
  /** The first failed check (an `expect` that threw), null when the checks passed. */
  checkError: unknown;
  /** The graders' verdict, when graders ran. */
  graded?: GradedTrial;
  /** The error the attempt threw, when it did not end with a result. */
  thrown?: unknown;
  /** Cassette file of the attempt. */
  cassette?: string;
  /** Skills the engine loaded. */
  skillsLoaded?: string[];
}

/** Options of {@link runTrials}. */
export interface RunTrialsOptions extends ResolvedTrialOptions {
  case: string;
  engine: string;
  /** Runs one attempt of one trial. */
  runTrial: (context: TrialContext) => Promise<TrialAttempt>;
  /** Called with each record as its trial ends (for progress). */
  onTrial?: (record: TrialRecord) => void;
}

function messageOf(error: unknown): string {
  const text = error instanceof Error ? error.message : String(error);
  return text.split('\n')[0]!.slice(0, 300);
}

/** Classifies one attempt: passed, failed (counted), or a class reported apart. */
function judge(attempt: TrialAttempt): {
  outcome: TrialRecord['outcome'];
  failureClass?: FailureClass;
  code?: string;
  reason?: string;
} {
  if (attempt.thrown !== undefined) {
    const code = attempt.thrown instanceof AgentHarnessError ? attempt.thrown.code : undefined;
    const cls = classOfCode(code);
    // A mistake in the test (CONFIG_INVALID, SKILL_INVALID, …) is not a trial outcome: it fails the test.
    if (!cls || cls === 'model') throw attempt.thrown;
    return { outcome: 'excluded', failureClass: cls, ...(code ? { code } : {}), reason: messageOf(attempt.thrown) };
  }
  if (attempt.graded && attempt.graded.errors.length > 0)
    return {
      outcome: 'excluded',
      failureClass: 'judge',
      code: attempt.graded.errors[0]!.code,
      reason: attempt.graded.errors.map((e) => `${e.name}: ${e.message}`).join('; '),
    };
  const gradedFail = attempt.graded && !attempt.graded.passed;
  if (attempt.checkError === null && !gradedFail) return { outcome: 'passed' };
  const reason =
    attempt.checkError !== null
      ? messageOf(attempt.checkError)
      : `graded ${attempt.graded!.score.toFixed(2)} < threshold ${attempt.graded!.threshold}`;
  const { failureClass, code } = classifyFailure(attempt.result ?? { completion: { state: 'unknown' } });
  return {
    outcome: failureClass === 'model' || failureClass === 'task' ? 'failed' : 'excluded',
    failureClass,
    ...(code ? { code } : {}),
    reason,
  };
}

async function runOne(options: RunTrialsOptions, arm: Arm, trial: number): Promise<TrialRecord> {
  const retried: string[] = [];
  for (let retry = 0; ; retry++) {
    const attempt = await options.runTrial({ arm, trial, retry, seedOffset: trial + retry * RETRY_SEED_STRIDE });
    const verdict = judge(attempt);
    const result = attempt.result;
    if (verdict.failureClass === 'infrastructure' && retry < options.maxInfraRetries) {
      if (result) retried.push(result.audit.dir);
      continue;
    }
    const usage = result?.usage;
    const tokens =
      usage && (usage.input_tokens !== null || usage.output_tokens !== null)
        ? (usage.input_tokens ?? 0) + (usage.output_tokens ?? 0)
        : null;
    const record: TrialRecord = {
      case: options.case,
      engine: options.engine,
      arm,
      trial,
      seed: attempt.seed,
      outcome: verdict.outcome,
      ...(verdict.failureClass ? { failureClass: verdict.failureClass } : {}),
      ...(verdict.code ? { failureCode: verdict.code } : {}),
      ...(verdict.reason ? { reason: verdict.reason } : {}),
      infraRetries: retry,
      k: options.k,
      ...(attempt.graded ? { score: attempt.graded.score } : {}),
      ...(attempt.skillsLoaded ? { skillsLoaded: attempt.skillsLoaded } : {}),
      runId: result?.runId ?? null,
      handle: result?.handle ?? null,
      auditDir: result?.audit.dir ?? null,
      ...(retried.length > 0 ? { retriedAuditDirs: retried } : {}),
      ...(attempt.cassette ? { cassette: attempt.cassette } : {}),
      durationMs: result?.durationMs ?? 0,
      tokens,
      costUsd: null,
    };
    options.onTrial?.(record);
    return record;
  }
}

/**
 * Runs every trial of every arm, at most `concurrency` at once, and returns their records ordered by arm, then trial.
 * A trial that threw a usage mistake (not an attempt outcome) rejects the whole set once the running ones end.
 */
export async function runTrials(options: RunTrialsOptions): Promise<TrialRecord[]> {
  const jobs = options.arms.flatMap((arm) =>
    Array.from({ length: options.trials }, (_, i) => ({ arm, trial: options.firstTrial + i })),
  );
  return mapAtMost(jobs, options.concurrency, (job) => runOne(options, job.arm, job.trial));
}
