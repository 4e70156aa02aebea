/**
 * runAttempt: one managed attempt of an engine, start or resume: the CLI, the Vitest fixtures and the providers all
 * run attempts through it, so a test and a terminal session produce the same run directory. An attempt is a pipeline
 * of named steps, each in its own file, whose outputs are typed side by side in attempt-steps.ts:
 *
 *   prepare → open → provision → launch → observe → seal
 *
 * prepare refuses a request before anything exists; from open on the attempt exists, and seal completes its audit
 * whatever failed in between.
 */
import { toAgentHarnessError } from '../errors/index.js';
import { startEarlyInit } from '../runtime/isolation/early-init.js';
import { earlyInitFits } from '../runtime/isolation/mode.js';
import type { AttemptRequest } from './attempt-request.js';
import type { AttemptResult } from './attempt-result.js';
import { launchAttempt } from './launch-attempt.js';
import type { AttemptOutcome, AttemptPlan } from './attempt-steps.js';
import { observeAttempt } from './observe-attempt.js';
import { openAttempt } from './open-attempt.js';
import { prepareAttempt } from './prepare-attempt.js';
import { provisionAttempt } from './provision-attempt.js';
import { takeSessionLock } from './session-lock.js';
import { sealAttempt } from './seal-attempt.js';

export { DEFAULT_ATTEMPT_TIMEOUT_MS } from './attempt-request.js';
export type { AttemptRequest, AttemptReadyInfo, IoMode } from './attempt-request.js';
export { BEFORE_HASH_LIMIT } from './launch-attempt.js';

/** Runs one attempt and returns its result. Throws only for errors before a run directory exists. */
export async function runAttempt(request: AttemptRequest): Promise<AttemptResult> {
  // The namespaces' init boots (a Node start of its own) while the attempt is prepared and opened, which adopt it or
  // kill it; a caller that started one earlier (the CLI) gave it in the request.
  const own =
    request.earlyInit === undefined &&
    earlyInitFits({
      split: (request.io ?? 'split') === 'split',
      modelMode: request.modelMode,
      transport: request.transport,
      isolation: request.isolation,
      env: request.hostEnv ?? process.env,
    })
      ? startEarlyInit()
      : null;
  try {
    return await runPipeline(own ? { ...request, earlyInit: own } : request);
  } finally {
    own?.discard();
  }
}

async function runPipeline(request: AttemptRequest): Promise<AttemptResult> {
  let plan: AttemptPlan;
  try {
    plan = await prepareAttempt(request);
  } catch (error) {
    // A request refused before the attempt exists has no use for an init started for it.
    request.earlyInit?.discard();
    throw error;
  }
  // A resume holds its run's session lock from before its attempt exists until it is sealed: a second resume of the
  // run meanwhile is refused (ENGINE_SESSION_BUSY) and makes no attempt.
  let releaseSession: (() => void) | null = null;
  if (plan.launch === 'resume' && request.run) {
    try {
      releaseSession = takeSessionLock(request.run);
    } catch (error) {
      request.earlyInit?.discard();
      throw error;
    }
  }
  try {
    const opened = await openAttempt(plan);
    let outcome: AttemptOutcome;
    try {
      const provisioned = await provisionAttempt(plan, opened);
      const launched = await launchAttempt(plan, opened, provisioned);
      outcome = await observeAttempt(plan, opened, provisioned, launched);
    } catch (caught) {
      const error = toAgentHarnessError(caught);
      opened.rasp.diagnostic({ code: error.code, message: error.message, level: 'error' });
      outcome = { process: null, fsDiff: null, error, before: null };
    }
    return await sealAttempt(plan, opened, outcome);
  } finally {
    releaseSession?.();
  }
}
