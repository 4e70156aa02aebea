/**
 * Sealing of attempts whose harness died (kill -9, second Ctrl-C, crash): a `meta.N.json` still `running`
 * whose recorded owner process is gone is finished from its raw logs, re-parsed through the engine's parser
 * into RASP/FCMP, with completion `failed` / `HARNESS_INTERRUPTED` and the session id the engine printed,
 * so the attempt can be translated and resumed.
 */
import fs from 'node:fs';
import { AttemptMetaSchema, type AttemptMeta, type RunIndexEntry } from '../protocol/index.js';
import { loadTranslationAdapter } from '../engines/translation-adapters.js';
import { translateRecorded } from '../translate/recorded.js';
import { writeJsonAtomic } from '../runtime/atomic-write.js';
import { MAX_AUDIT_FILE_BYTES, readInputBytesSync } from '../runtime/bounded-input.js';
import { withFileLock } from '../runtime/file-lock.js';
import { isOwnerAlive, reclaimDeadLeases } from '../runtime/lease.js';
import type { HarnessPaths } from '../runtime/paths.js';
import { updateRun } from '../runtime/run-store.js';
import { attemptAuditPaths, attemptMetaPath, fcmpSeqStart, writeJsonl } from './audit-files.js';

function readIfPresent(file: string): Uint8Array | undefined {
  try {
    return fs.readFileSync(file);
  } catch {
    return undefined;
  }
}

/** True when `meta` belongs to an attempt whose harness process is gone without finishing it. */
export function isOrphanedAttempt(meta: AttemptMeta): boolean {
  return meta.status === 'running' && meta.owner !== undefined && !isOwnerAlive(meta.owner);
}

/** Seals attempt `attempt` of `runDir` if its owner died; returns the sealed meta, or null when there was nothing to seal. */
export async function sealAttemptIfOrphaned(runDir: string, attempt: number): Promise<AttemptMeta | null> {
  const metaFile = attemptMetaPath(runDir, attempt);
  const first = readRunningMeta(metaFile);
  if (!first || !isOrphanedAttempt(first)) return null;
  // Two commands may find the same orphan at once (`runs` in two terminals): one seals it, the other sees it sealed.
  return withFileLock(metaFile, async () => {
    const meta = readRunningMeta(metaFile);
    return meta && isOrphanedAttempt(meta) ? seal(runDir, attempt, meta) : null;
  });
}

/**
 * The attempt's meta while it says `running`, or null: finished, missing or truncated (the store's concern: translate
 * works from the raw logs). Only a running meta can be an orphan, so only a running one is checked against the
 * schema: a listing of 5,000 finished runs reads their metas without 5,000 schema checks.
 */
function readRunningMeta(file: string): AttemptMeta | null {
  try {
    // Read as an input: the run directory is the engine's, and a FIFO there must not block the listing for good.
    const text = readInputBytesSync(file, { what: 'attempt meta', maxBytes: MAX_AUDIT_FILE_BYTES }).toString('utf8');
    // A meta whose status is "running" holds that JSON string: one without it is not parsed at all.
    if (!text.includes('"running"')) return null;
    const value: unknown = JSON.parse(text);
    if ((value as { status?: unknown } | null)?.status !== 'running') return null;
    return AttemptMetaSchema.parse(value);
  } catch {
    return null;
  }
}

/** Finishes an orphaned attempt from its raw logs. */
async function seal(runDir: string, attempt: number, meta: AttemptMeta): Promise<AttemptMeta> {
  const audit = attemptAuditPaths(runDir, attempt);
  const translation = translateRecorded(
    await loadTranslationAdapter(meta.engine),
    { stdout: readIfPresent(audit.stdout), stderr: readIfPresent(audit.stderr), pty: readIfPresent(audit.ptyOutput) },
    { runId: meta.run_id, attempt, launch: meta.launch === 'resume' ? 'resume' : 'start', seqStart: fcmpSeqStart(runDir, attempt), sessionId: meta.session_id },
  );
  writeJsonl(audit.rasp, translation.rasp);
  writeJsonl(audit.fcmp, translation.fcmp);
  const endedAt = new Date();
  const sealed: AttemptMeta = {
    ...meta,
    status: 'finished',
    timings: { ...meta.timings, ended_at: endedAt.toISOString(), duration_ms: Math.max(0, endedAt.getTime() - Date.parse(meta.timings.started_at)) },
    exit: meta.exit ?? { code: null, signal: null, timed_out: false, canceled: false },
    session_id: translation.summary.session_id ?? meta.session_id,
    completion: { state: 'failed', reason: 'HARNESS_INTERRUPTED' },
    error: { code: 'HARNESS_INTERRUPTED', message: `The harness process ${meta.owner!.pid} ended before attempt ${attempt} finished; sealed from its raw logs.` },
  };
  await writeJsonAtomic(audit.meta, sealed);
  return sealed;
}

/** Seals every orphaned attempt of `runDir` (attempts 1..n while their meta exists); returns the sealed metas. */
export async function sealOrphanedAttempts(runDir: string): Promise<AttemptMeta[]> {
  const sealed: AttemptMeta[] = [];
  for (let attempt = 1; fs.existsSync(attemptMetaPath(runDir, attempt)); attempt += 1) {
    const meta = await sealAttemptIfOrphaned(runDir, attempt);
    if (meta) sealed.push(meta);
  }
  return sealed;
}

/**
 * What a command calls on a run it resolved: reclaims dead owners' config leases, seals orphaned attempts and
 * brings `run.json`/the index up to date (attempt count, session id, last completion). Returns the run as it now is.
 */
export async function recoverRun(paths: Pick<HarnessPaths, 'runRoot' | 'agentHome'>, run: RunIndexEntry): Promise<RunIndexEntry> {
  await reclaimDeadLeases(paths.agentHome);
  return sealRun(paths, run);
}

/** {@link recoverRun} without the leases: seals the run's orphaned attempts and updates its record. */
async function sealRun(paths: Pick<HarnessPaths, 'runRoot'>, run: RunIndexEntry): Promise<RunIndexEntry> {
  const sealed = await sealOrphanedAttempts(run.run_dir);
  if (sealed.length === 0) return run;
  const last = sealed[sealed.length - 1]!;
  return updateRun(paths.runRoot, run.run_id, {
    session_id: last.session_id ?? run.session_id,
    last_completion: 'failed',
  }, last.attempt);
}

/**
 * {@link recoverRun} over a listing (`runs`): each run as it is after sealing its orphaned attempts. The dead owners'
 * leases are reclaimed once, not once per run: they live under the managed home, not in the runs.
 */
export async function recoverRuns(paths: Pick<HarnessPaths, 'runRoot' | 'agentHome'>, runs: readonly RunIndexEntry[]): Promise<RunIndexEntry[]> {
  await reclaimDeadLeases(paths.agentHome);
  const recovered: RunIndexEntry[] = [];
  for (const run of runs) recovered.push(await sealRun(paths, run));
  return recovered;
}
