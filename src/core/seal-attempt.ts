/**
 * Step 6 of an attempt, seal: every audit file is completed, whatever happened before. The live FCMP (translated
 * while the engine spoke, `live-fcmp.ts`) is ended with the verdict of its judge; the run's record, the conformance
 * report and the final meta are written; what the attempt held is given back. A full disk is recorded per file, never
 * thrown: the verdict and every file that can still be written are kept, and the attempt ends AUDIT_WRITE_FAILED
 * naming what is missing.
 *
 * There is no second pass over the RASP events: a result whose exit code only the engine's next model request states
 * was completed live, when the model server saw that request. The one read-back left is the tamper check
 * ({@link checkAuditUntouched}), made only where the agent can write `.audit/`.
 */
import fs from 'node:fs';
import { categoryOfCode, toAgentHarnessError, type AgentHarnessError } from '../errors/index.js';
import type { AttemptMeta, Completion, ConformanceReport, RunIndexEntry } from '../protocol/index.js';
import { writeJsonAtomic } from '../runtime/atomic-write.js';
import { writeOwnFileSync } from '../runtime/own-file.js';
import { updateRun } from '../runtime/run-store.js';
import type { CompletionJudgement } from '../translate/completion.js';
import { attemptResult, type AttemptResult } from './attempt-result.js';
import { auditWriteFailed, ensureFsAuditFiles } from './audit-files.js';
import { finishedMeta } from './attempt-meta.js';
import type { AttemptOutcome, AttemptPlan, OpenedAttempt } from './attempt-steps.js';

/**
 * Writes `model-requests.N.jsonl` when the attempt's own server did not (it logs as it answers): the requests of a
 * shared server during the attempt, or none (live mode, or no request made). Every attempt has the file.
 */
function writeModelRequestLog(file: string, requests: readonly unknown[] | null): void {
  if (requests === null && fs.existsSync(file)) return;
  writeOwnFileSync(file, (requests ?? []).map((row) => `${JSON.stringify(row)}\n`).join(''));
}

function failedBy(error: AgentHarnessError): CompletionJudgement {
  return {
    state: 'failed',
    reason: error.code,
    failure: { category: categoryOfCode(error.code), code: error.code, message: error.message },
    evidenceSeq: null,
  };
}

/**
 * A failed turn the judge could not name, when the scripted model answered a request past the end of its script
 * (`response_kind: exhausted`): the engine only echoed the server's 400, so the failure is MODEL_SCRIPT_EXHAUSTED.
 */
function namedExhaustion(judged: CompletionJudgement, scriptExhausted: boolean): CompletionJudgement {
  const failure = judged.failure;
  if (!scriptExhausted || judged.state !== 'failed' || !failure) return judged;
  if (
    failure.category !== 'unknown' &&
    failure.category !== 'engine_crash' &&
    !/script exhausted/.test(failure.message)
  )
    return judged;
  return {
    ...judged,
    failure: { ...failure, category: categoryOfCode('MODEL_SCRIPT_EXHAUSTED'), code: 'MODEL_SCRIPT_EXHAUSTED' },
  };
}

/**
 * The tamper check of the seal: where the agent can write `.audit/` (the host filesystem: the fallback where
 * filesystem containment is unavailable, and `--isolation off`), the RASP and FCMP files are read back and checked to
 * be exactly what the harness wrote (AUDIT_TAMPERED if not). Inside the mount namespace `.audit/` is read-only to the
 * agent, so the check would cost a read of both files for nothing, and is not made.
 */
function checkAuditUntouched(opened: OpenedAttempt): AgentHarnessError | null {
  if (opened.record.isolation?.filesystem === 'mount-namespace') return null;
  try {
    opened.raspSpool.check();
    opened.fcmpSpool.check();
    return null;
  } catch (error) {
    return toAgentHarnessError(error);
  }
}

/** Ends the attempt's live FCMP with the attempt's verdict and returns its completion. */
async function finishEvents(opened: OpenedAttempt, outcome: AttemptOutcome, scriptExhausted: boolean) {
  const tampered = checkAuditUntouched(opened);
  // A harness failure before the engine ran overrides the translator's own judge.
  // So does a cassette's miss: the engine was answered from no recording, whatever it then printed.
  const harnessFailure =
    tampered ??
    (outcome.error && (!outcome.process || outcome.error.code.startsWith('CASSETTE_')) ? outcome.error : null);
  const judged = harnessFailure ? failedBy(harnessFailure) : namedExhaustion(opened.fcmp.verdict(), scriptExhausted);
  await opened.fcmp.finish(judged);
  const completion: Completion = {
    state: judged.state,
    reason: judged.reason,
    ...(judged.failure ? { code: judged.failure.code } : {}),
  };
  return { completion, finalMessage: opened.fcmp.finalMessage, tampered };
}

/**
 * The run's record and index, while the rest is sealed: the attempt count comes from the meta files, which exist since
 * the attempt began (updateRun derives it under the index lock; concurrent resumes).
 */
function updateRunRecord(plan: AttemptPlan, opened: OpenedAttempt, completion: Completion): Promise<RunIndexEntry> {
  const { request } = plan;
  const scriptInForce = request.modelServer ? (request.modelServer.script ?? null) : (plan.script ?? null);
  return updateRun(
    request.paths.runRoot,
    opened.run.run_id,
    {
      session_id: opened.facts.sessionId,
      last_completion: completion.state,
      // The script in force, inline: a shared server's (the fixtures', appended turns included), else the attempt's own.
      ...(scriptInForce ? { script: scriptInForce } : {}),
    },
    opened.attempt,
  ).catch(() => opened.run);
}

/**
 * Writes the conformance report and the finished meta (once what the attempt held is given back: the release
 * records the trust entry's removal). A file that cannot be written makes the attempt's error AUDIT_WRITE_FAILED.
 */
async function writeSealed(
  plan: AttemptPlan,
  opened: OpenedAttempt,
  outcome: AttemptOutcome,
  sealed: { completion: Completion; error: AgentHarnessError | null; released: Promise<void> },
): Promise<{ meta: AttemptMeta; conformance: ConformanceReport; error: AgentHarnessError | null }> {
  const { audit, attempt, failures, clock } = opened;
  const { completion } = sealed;
  const endedAt = new Date();
  const conformance = opened.tally.report({
    runId: opened.run.run_id,
    engine: plan.adapter.id,
    attempt,
    launch: plan.launch,
    completion,
    durationMs: endedAt.getTime() - opened.startedAt.getTime(),
    engineVersion: opened.record.engineVersion ?? null,
    engineVersionChecked: opened.record.engineVersionChecked ?? null,
  });
  const conformanceWritten = failures.attemptAsync(audit.conformance, () =>
    writeJsonAtomic(audit.conformance, conformance),
  );
  await sealed.released;
  clock.mark('cleanup');
  await conformanceWritten;
  clock.mark('conformance');
  let error = sealed.error;
  if (failures.list.length > 0) error = auditWriteFailed(audit, attempt, failures.list, error);
  const processResult = outcome.process;
  const meta = finishedMeta(opened.initialMeta, opened.record, {
    startedAt: opened.startedAt,
    endedAt,
    exit: processResult
      ? {
          code: processResult.exitCode,
          signal: processResult.signal,
          timed_out: processResult.timedOut,
          canceled: processResult.canceled,
        }
      : null,
    sessionId: opened.facts.sessionId,
    completion,
    usage: opened.facts.usage,
    error: error ? { code: error.code, message: error.message } : null,
    // The meta's list is the RASP event's (derived once, by observe); none when the engine made no real request.
    offered: plan.modelMode !== 'live' ? (opened.facts.offered ?? []) : null,
    steps: clock.record(),
  });
  // Written as built, not parsed by `AttemptMetaSchema`: the meta is ours, typed, and loading zod to check it cost a
  // fresh process more than the rest of the seal (issue 44). The tests hold every sealed meta to the schema
  // (tests/helpers/audit.ts: parsed, it must be what was written).
  await failures.attemptAsync(audit.meta, () => writeJsonAtomic(audit.meta, meta));
  if (failures.has(audit.meta)) error = auditWriteFailed(audit, attempt, failures.list, error);
  return { meta, conformance, error };
}

/** Seals the attempt and returns its result. */
export async function sealAttempt(
  plan: AttemptPlan,
  opened: OpenedAttempt,
  outcome: AttemptOutcome,
): Promise<AttemptResult> {
  const { adapter, launch } = plan;
  const { audit, attempt, failures, clock, runDir } = opened;
  // Already given back when the engine ran; waited for before the meta records the trust entry's removal.
  const released = opened.resources.release();
  await outcome.before;
  await failures.attemptAsync(audit.fsDiff, () => ensureFsAuditFiles(audit, runDir));
  const model = await opened.model.catch(() => null);
  const requests = model?.requests() ?? [];
  failures.attempt(audit.modelRequests, () =>
    writeModelRequestLog(audit.modelRequests, model?.owned && !model.owned.logError ? null : requests),
  );
  const { completion, finalMessage, tampered } = await finishEvents(
    opened,
    outcome,
    requests.some((row) => row.response_kind === 'exhausted'),
  );
  opened.raspSpool.close();
  opened.fcmpSpool.close();
  opened.writer.close();
  clock.mark('translate');
  const runUpdated = updateRunRecord(plan, opened, completion);
  const sealed = await writeSealed(plan, opened, outcome, { completion, error: tampered ?? outcome.error, released });
  const { meta, conformance, error } = sealed;
  const run = await runUpdated;
  const processResult = outcome.process;
  return attemptResult(
    {
      runId: run.run_id,
      handle: run.handle,
      runDir,
      engine: adapter.id,
      attempt,
      launch,
      sessionId: meta.session_id,
      exitCode: processResult?.exitCode ?? null,
      signal: processResult?.signal ?? null,
      timedOut: processResult?.timedOut ?? false,
      completion,
      finalMessage,
      fsDiff: outcome.fsDiff,
      usage: meta.usage,
      durationMs: meta.timings.duration_ms ?? 0,
      engineVersion: meta.engine_version ?? null,
      engineVersionChecked: meta.engine_version_checked ?? null,
      skillsInjected: meta.skill_injection.skills.map((s) => s.name),
      skillsOffered: meta.skill_injection.offered ?? null,
      audit,
      conformance,
      error,
      ...(meta.model.cassette ? { cassette: meta.model.cassette } : {}),
    },
    { rasp: opened.raspSpool, fcmp: opened.fcmpSpool },
  );
}
