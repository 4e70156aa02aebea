/**
 * Step 5 of an attempt, observe: waits for the engine (its output is recorded as it comes, by the spawn), starts
 * giving back what the attempt holds, and records what the engine did: its exit, the skills it offered the model,
 * its session when only its session store knows it, and the run directory's fs-after, diff and git patch.
 */
import path from 'node:path';
import { AgentHarnessError, toAgentHarnessError } from '../errors/index.js';
import type { FsDiff } from '../protocol/index.js';
import { writeJsonAtomic } from '../runtime/atomic-write.js';
import { diffSnapshots, snapshotTree } from '../runtime/fs-snapshot.js';
import { writeOwnFileSync } from '../runtime/own-file.js';
import type { ProcessResult } from '../runtime/process-result.js';
import { attemptGitDiffPath, attemptGitIndexPath } from './audit-files.js';
import { isModelCall, offeredSkills } from './offered-skills.js';
import type {
  AttemptModel,
  AttemptOutcome,
  AttemptPlan,
  LaunchedAttempt,
  OpenedAttempt,
  ProvisionedAttempt,
} from './attempt-steps.js';
import { gitDiffPatch } from './workspace.js';

/** The harness's error for an engine that could not start or did not finish in time; null otherwise. */
function engineRunError(
  plan: AttemptPlan,
  opened: OpenedAttempt,
  provisioned: ProvisionedAttempt,
  launched: LaunchedAttempt,
  result: ProcessResult,
): AgentHarnessError | null {
  if (result.spawnError && (result.spawnError as NodeJS.ErrnoException).code === 'ISOLATION_SETUP_FAILED') {
    const error = new AgentHarnessError(
      'ISOLATION_SETUP_FAILED',
      `The agent's filesystem could not be set up, so ${plan.adapter.id} was not started (step ${result.spawnError.message}).`,
      { cause: result.spawnError, attempt: opened.attempt },
    );
    opened.rasp.diagnostic({ code: 'ISOLATION_SETUP_FAILED', message: error.message, level: 'error' });
    return error;
  }
  if (result.spawnError) {
    const error = new AgentHarnessError(
      'ENGINE_SPAWN_FAILED',
      `Could not start ${provisioned.executable}: ${result.spawnError.message}`,
      { cause: result.spawnError, attempt: opened.attempt },
    );
    opened.rasp.diagnostic({ code: 'ENGINE_SPAWN_FAILED', message: error.message, level: 'error' });
    return error;
  }
  if (!result.timedOut) return null;
  const killed =
    provisioned.isolation.record.processes === 'pid-namespace'
      ? 'every process of the attempt was killed (PID namespace)'
      : 'its process group was killed';
  return new AgentHarnessError(
    'ENGINE_TIMEOUT',
    `${plan.adapter.id} did not finish within ${launched.timeoutMs} ms; ${killed}.`,
    { attempt: opened.attempt },
  );
}

/** Records the run directory as the engine left it: fs-after, the diff against fs-before, and the git patch. */
async function recordFiles(plan: AttemptPlan, opened: OpenedAttempt, launched: LaunchedAttempt): Promise<FsDiff> {
  const { audit, runDir, attempt } = opened;
  // What the background hashing has not covered yet is read now, and fs-before written; the after-snapshot reuses
  // its hashes.
  const before = await launched.before;
  const after = await snapshotTree(runDir);
  const diff = diffSnapshots(before, after, plan.adapter.bookkeepingPaths);
  const [patch] = await Promise.all([
    gitDiffPatch(runDir, attemptGitIndexPath(runDir, attempt)),
    writeJsonAtomic(audit.fsAfter, after, { pretty: false }),
    writeJsonAtomic(audit.fsDiff, diff),
  ]);
  if (patch !== null) {
    const file = attemptGitDiffPath(runDir, attempt);
    opened.failures.attempt(file, () => {
      writeOwnFileSync(file, patch);
      opened.record.gitDiff = path.relative(runDir, file);
    });
  }
  return diff;
}

/**
 * Finishes the cassette (its file is complete once the engine is done): what it found goes into the attempt's
 * diagnostics and its counts into the meta; returns the error it fails the attempt with, if any.
 */
async function recordCassette(opened: OpenedAttempt, model: AttemptModel | null): Promise<AgentHarnessError | null> {
  const cassette = model?.cassette ? await model.cassette.finish() : null;
  if (!cassette) return null;
  // The error that fails the attempt is its failure (conversation.failed), not also a diagnostic: said once.
  const failing = cassette.error;
  for (const diagnostic of cassette.diagnostics)
    if (!(failing && diagnostic.code === failing.code && diagnostic.message === failing.message))
      opened.rasp.diagnostic(diagnostic);
  opened.record.cassette = {
    path: cassette.file,
    mode: cassette.mode,
    interactions: cassette.interactions,
    exact: cassette.exact,
    divergent: cassette.divergent,
    missed: cassette.missed,
    unused: cassette.unused,
    ...(cassette.fork ? { fork: cassette.fork } : {}),
  };
  return cassette.error ?? null;
}

/** Waits for the engine and records what it did; never throws (a failure is the outcome's error). */
export async function observeAttempt(
  plan: AttemptPlan,
  opened: OpenedAttempt,
  provisioned: ProvisionedAttempt,
  launched: LaunchedAttempt,
): Promise<AttemptOutcome> {
  const { rasp, clock } = opened;
  const engineResult = await launched.engine;
  clock.mark('engine');
  // Ended by a guard of the harness (MCP startup, terminal UI): a failure of the attempt, not the user's cancel.
  const stalled = launched.endedBy();
  const result = stalled ? { ...engineResult, canceled: false } : engineResult;
  // Given back while the attempt is sealed.
  void opened.resources.release();
  let error = stalled ?? engineRunError(plan, opened, provisioned, launched, result);
  // Over ACP: a broken conversation (not a cancel) is the attempt's error.
  const acp = launched.acp ? await launched.acp : null;
  if (acp?.error && !result.canceled) error ??= acp.error;
  const model = await opened.model.catch(() => null);
  const requests = model?.requests() ?? [];
  error ??= await recordCassette(opened, model);
  // The skills the engine offered, as found in its first real model request (scripted mode), as a RASP event.
  if (plan.modelMode !== 'live' && requests.some(isModelCall)) {
    rasp.recovered([
      {
        type: 'engine.skills.offered',
        skills: offeredSkills(
          (opened.record.skillInjection?.skills ?? opened.initialMeta.skill_injection.skills).map((s) => s.name),
          requests,
        ),
        source: 'model_request',
      },
    ]);
  }
  // A live terminal attempt shows a TUI, not events: its session comes from the engine's own session store.
  if (plan.io !== 'split' && plan.adapter.recoverSession && !opened.facts.sawSession) {
    rasp.recovered(
      await plan.adapter
        .recoverSession({ runDir: opened.runDir, agentHome: opened.home.home, since: opened.startedAt })
        .catch(() => []),
    );
  }
  rasp.exited({
    exit_code: result.exitCode,
    signal: result.signal,
    timed_out: result.timedOut,
    canceled: result.canceled,
    duration_ms: result.durationMs,
  });
  let fsDiff: FsDiff | null = null;
  try {
    fsDiff = await recordFiles(plan, opened, launched);
  } catch (caught) {
    error = toAgentHarnessError(caught);
    rasp.diagnostic({ code: error.code, message: error.message, level: 'error' });
  }
  clock.mark('fs_after');
  return { process: result, fsDiff, error, before: launched.before.catch(() => undefined) };
}
