/**
 * Step 6 of an attempt, seal: every audit file is completed, whatever happened before. The RASP events are
 * translated to FCMP in one pass whose judge gives the verdict; the run's record, the conformance report and the
 * final meta are written; what the attempt held is given back. A full disk is recorded per file, never thrown: the
 * verdict and every file that can still be written are kept, and the attempt ends AUDIT_WRITE_FAILED naming what is
 * missing.
 *
 * FCMP is derived here, in a second pass over the RASP events, not as each RASP event is built: a tool result's
 * exit code is, for some engines, known only from the engine's next model request (`exitCodesFromModelRequests`),
 * which may arrive after the tool result's event; and reading rasp.N.jsonl back is the check that the agent did not
 * rewrite it (AUDIT_TAMPERED).
 */
import { mcpServersCalled } from './mcp-reach.js';
import fs from 'node:fs';
import { categoryOfCode, toAgentHarnessError, type AgentHarnessError } from '../errors/index.js';
import type { AttemptMeta, Completion, FcmpEvent } from '../protocol/index.js';
import { writeJsonAtomic } from '../runtime/atomic-write.js';
import { writeOwnFileSync } from '../runtime/own-file.js';
import { updateRun } from '../runtime/run-store.js';
import type { CompletionJudgement } from '../translate/completion.js';
import { createFcmpTranslator } from '../translate/fcmp.js';
import { exitCodesFromModelRequests } from '../translate/tool-calls.js';
import { attemptResult, type AttemptResult } from './attempt-result.js';
import { auditWriteFailed, ensureFsAuditFiles, fcmpSeqStart } from './audit-files.js';
import { EventSpool } from './event-spool.js';
import type { AttemptOutcome } from './observe-attempt.js';
import type { OpenedAttempt } from './open-attempt.js';
import type { AttemptPlan } from './prepare-attempt.js';

let metaSchema: Promise<typeof import('../protocol/meta.js')> | undefined;

/**
 * The audit meta's schemas (~10 ms to load and build in a fresh process), loaded once: observe starts loading them
 * while the first engine runs, so the seal after it does not wait for them.
 */
export function loadMetaSchema(): Promise<typeof import('../protocol/meta.js')> {
  metaSchema ??= import('../protocol/meta.js');
  return metaSchema;
}

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

/** Translates the attempt's RASP events to FCMP (written as they come) and judges its completion. */
function translateEvents(
  plan: AttemptPlan,
  opened: OpenedAttempt,
  outcome: AttemptOutcome,
  toolExitCodes: ReadonlyMap<string, number>,
  scriptExhausted: boolean,
) {
  const { request, adapter, launch } = plan;
  const { run, attempt, runDir, audit, failures, tally } = opened;
  // A call whose argv the user wrote may start no session (`agent-harness codex --version`): not a failure.
  const expectSession = launch === 'resume' || (!request.rawArgs && (request.passthrough?.length ?? 0) === 0);
  const translator = createFcmpTranslator({
    runId: run.run_id,
    engine: adapter.id,
    attempt,
    seqStart: fcmpSeqStart(runDir, attempt),
    launch,
    errorPatterns: adapter.errorPatterns,
    expectSession,
    mcpServersUsed: mcpServersCalled(plan.script),
    replyText: launch === 'resume' ? (request.message ?? null) : null,
    sessionId: run.session_id,
    toolExitCodes,
  });
  const fcmp = new EventSpool<FcmpEvent>(audit.fcmp, failures, plan.eventMemoryBytes);
  let finalMessage: string | null = null;
  const emit = (events: readonly FcmpEvent[]): void => {
    for (const event of events) {
      fcmp.push(event);
      tally.fcmp(event);
      if (event.type === 'assistant.message.final') finalMessage = event.data.text;
    }
  };
  // The events again, from memory or (a long attempt) read back from rasp.N.jsonl, checked to be what was written.
  let tampered: AgentHarnessError | null = null;
  try {
    for (const event of opened.raspSpool.events()) {
      tally.rasp(event);
      emit(translator.push(event));
    }
  } catch (error) {
    tampered = toAgentHarnessError(error);
  }
  // A harness failure before the engine ran overrides the translator's own judge.
  // So does a cassette's miss: the engine was answered from no recording, whatever it then printed.
  const harnessFailure =
    tampered ??
    (outcome.error && (!outcome.process || outcome.error.code.startsWith('CASSETTE_')) ? outcome.error : null);
  const judged = harnessFailure ? failedBy(harnessFailure) : namedExhaustion(translator.verdict(), scriptExhausted);
  emit(translator.finish(judged));
  const completion: Completion = {
    state: judged.state,
    reason: judged.reason,
    ...(judged.failure ? { code: judged.failure.code } : {}),
  };
  return { fcmp, completion, finalMessage, tampered };
}

/** Seals the attempt and returns its result. */
export async function sealAttempt(
  plan: AttemptPlan,
  opened: OpenedAttempt,
  outcome: AttemptOutcome,
): Promise<AttemptResult> {
  const { request, adapter, launch } = plan;
  const { audit, attempt, failures, clock, runDir } = opened;
  const schemas = loadMetaSchema();
  // Already given back when the engine ran; waited for below, before the meta records the trust entry's removal.
  const released = opened.resources.release();
  await outcome.before;
  await failures.attemptAsync(audit.fsDiff, () => ensureFsAuditFiles(audit, runDir));
  const model = await opened.model.catch(() => null);
  const requests = model?.requests() ?? [];
  failures.attempt(audit.modelRequests, () =>
    writeModelRequestLog(audit.modelRequests, model?.owned && !model.owned.logError ? null : requests),
  );
  const toolExitCodes = exitCodesFromModelRequests(requests);
  // The meta's list is the RASP event's (derived once, above); none when the engine made no real request.
  if (plan.modelMode !== 'live') opened.meta.skill_injection.offered = opened.facts.offered ?? [];
  const { fcmp, completion, finalMessage, tampered } = translateEvents(
    plan,
    opened,
    outcome,
    toolExitCodes,
    requests.some((row) => row.response_kind === 'exhausted'),
  );
  let error = tampered ?? outcome.error;
  opened.raspSpool.close();
  fcmp.close();
  opened.writer.close();
  clock.mark('translate');

  const endedAt = new Date();
  const sessionId = opened.facts.sessionId;
  const scriptInForce = request.modelServer ? (request.modelServer.script ?? null) : (plan.script ?? null);
  // The run's record and index, while the rest is sealed: the attempt count comes from the meta files, which exist
  // since the attempt began (updateRun derives it under the index lock; concurrent resumes).
  const runUpdated = updateRun(
    request.paths.runRoot,
    opened.run.run_id,
    {
      session_id: sessionId,
      last_completion: completion.state,
      // The script in force, inline: a shared server's (the fixtures', appended turns included), else the attempt's own.
      ...(scriptInForce ? { script: scriptInForce } : {}),
    },
    attempt,
  ).catch(() => opened.run);
  const processResult = outcome.process;
  const meta: AttemptMeta = {
    ...opened.meta,
    status: 'finished',
    timings: {
      started_at: opened.meta.timings.started_at,
      ended_at: endedAt.toISOString(),
      duration_ms: endedAt.getTime() - opened.startedAt.getTime(),
    },
    exit: processResult
      ? {
          code: processResult.exitCode,
          signal: processResult.signal,
          timed_out: processResult.timedOut,
          canceled: processResult.canceled,
        }
      : null,
    session_id: sessionId,
    completion,
    usage: opened.facts.usage,
    error: error ? { code: error.code, message: error.message } : null,
  };
  const conformance = opened.tally.report({
    runId: opened.run.run_id,
    engine: adapter.id,
    attempt,
    launch,
    completion,
    durationMs: meta.timings.duration_ms,
    engineVersion: meta.engine_version ?? null,
    engineVersionChecked: meta.engine_version_checked ?? null,
  });
  const conformanceWritten = failures.attemptAsync(audit.conformance, () =>
    writeJsonAtomic(audit.conformance, conformance),
  );
  // The release records the trust entry's removal in the meta's trust object (shared by `meta`).
  await released;
  clock.mark('cleanup');
  await conformanceWritten;
  clock.mark('conformance');
  meta.timings.steps = opened.clock.record();
  if (failures.list.length > 0) {
    error = auditWriteFailed(audit, attempt, failures.list, error);
    meta.error = { code: error.code, message: error.message };
  }
  // Checked once, so without zod's JIT: compiling a parser for the meta's ~30 object schemas costs more than it saves.
  const { AttemptMetaSchema } = await schemas;
  await failures.attemptAsync(audit.meta, () =>
    writeJsonAtomic(audit.meta, AttemptMetaSchema.parse(meta, { jitless: true })),
  );
  if (failures.has(audit.meta)) error = auditWriteFailed(audit, attempt, failures.list, error);
  const run = await runUpdated;

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
    { rasp: opened.raspSpool, fcmp, toolExitCodes },
  );
}
