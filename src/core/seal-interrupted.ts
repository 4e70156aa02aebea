/**
 * Sealing of attempts whose harness died (kill -9, second Ctrl-C, crash): a `meta.N.json` still `running`
 * whose recorded owner process is gone is finished from its raw logs, re-parsed through the engine's parser
 * into RASP/FCMP, with completion `failed` / `HARNESS_INTERRUPTED` and the session id the engine printed,
 * so the attempt can be translated and resumed.
 */
import fs from 'node:fs';
import type { AttemptMeta, FcmpEvent, RaspEvent, RunIndexEntry } from '../protocol/index.js';
import { loadTranslationAdapter } from '../engines/registry.js';
import { translationForTransport } from '../engines/acp/translation.js';
import {
  translateRecordedStreams,
  type RecordedSources,
  type StreamedTranslation,
} from '../translate/recorded-stream.js';
import { writeJsonAtomic } from '../runtime/atomic-write.js';
import { checkInputFile, MAX_AUDIT_FILE_BYTES, readInputBytesSync, streamInputFile } from '../runtime/bounded-input.js';
import { withFileLock } from '../runtime/file-lock.js';
import { isOwnerAlive, reclaimDeadLeases } from '../runtime/lease.js';
import { type HarnessPaths, runHome } from '../runtime/paths.js';
import { updateRun } from '../runtime/run-store.js';
import {
  attemptAuditPaths,
  attemptMetaPath,
  AuditWriteFailures,
  auditWriteFailed,
  fcmpSeqStart,
  type AttemptAuditPaths,
} from './audit-files.js';
import { EventSpool } from './event-spool.js';

/**
 * The raw logs of the attempt that exist as regular files, read in chunks when translated (a long attempt's logs are
 * never held whole; a FIFO the engine left in its place is passed over).
 */
function rawLogSources(audit: AttemptAuditPaths): RecordedSources {
  const sources: RecordedSources = {};
  for (const [stream, file] of [
    ['stdout', audit.stdout],
    ['stderr', audit.stderr],
    ['pty', audit.ptyOutput],
  ] as const) {
    const check = { what: `${stream} log` };
    try {
      checkInputFile(file, check);
    } catch {
      continue;
    }
    sources[stream] = () => streamInputFile(file, check, undefined, { reuseChunks: true });
  }
  return sources;
}

/** True when `meta` belongs to an attempt whose harness process is gone without finishing it. */
export function isOrphanedAttempt(meta: AttemptMeta): boolean {
  return meta.status === 'running' && meta.owner !== undefined && !isOwnerAlive(meta.owner);
}

/** Seals attempt `attempt` of `runDir` if its owner died; returns the sealed meta, or null when there was nothing to seal. */
export async function sealAttemptIfOrphaned(runDir: string, attempt: number): Promise<AttemptMeta | null> {
  const metaFile = attemptMetaPath(runDir, attempt);
  const first = await readRunningMeta(metaFile);
  if (!first || !isOrphanedAttempt(first)) return null;
  // Two commands may find the same orphan at once (`runs` in two terminals): one seals it, the other sees it sealed.
  return withFileLock(metaFile, async () => {
    const meta = await readRunningMeta(metaFile);
    return meta && isOrphanedAttempt(meta) ? seal(runDir, attempt, meta) : null;
  });
}

/**
 * The attempt's meta while it says `running`, or null: finished, missing or truncated (the store's concern: translate
 * works from the raw logs). Only a running meta can be an orphan, so only a running one is checked against the
 * schema: a listing of 5,000 finished runs reads their metas without 5,000 schema checks, and a resume of a run
 * whose attempts all finished never loads the schemas (nor zod: issue 44).
 */
async function readRunningMeta(file: string): Promise<AttemptMeta | null> {
  try {
    // Read as an input: the run directory is the engine's, and a FIFO there must not block the listing for good.
    const text = readInputBytesSync(file, { what: 'attempt meta', maxBytes: MAX_AUDIT_FILE_BYTES }).toString('utf8');
    // A meta whose status is "running" holds that JSON string: one without it is not parsed at all.
    if (!text.includes('"running"')) return null;
    const value: unknown = JSON.parse(text);
    if ((value as { status?: unknown } | null)?.status !== 'running') return null;
    const { AttemptMetaSchema } = await import('../protocol/meta.js');
    return AttemptMetaSchema.parse(value);
  } catch {
    return null;
  }
}

/** Finishes an orphaned attempt from its raw logs. */
async function seal(runDir: string, attempt: number, meta: AttemptMeta): Promise<AttemptMeta> {
  const audit = attemptAuditPaths(runDir, attempt);
  // RASP and FCMP are written as they are translated (spools that keep nothing in memory).
  const failures = new AuditWriteFailures();
  const rasp = new EventSpool<RaspEvent>(audit.rasp, failures, 0);
  const fcmp = new EventSpool<FcmpEvent>(audit.fcmp, failures, 0);
  let translation: StreamedTranslation;
  try {
    translation = await translateRecordedStreams(
      translationForTransport(await loadTranslationAdapter(meta.engine), meta.transport, audit.acpClient),
      rawLogSources(audit),
      {
        runId: meta.run_id,
        attempt,
        launch: meta.launch === 'resume' ? 'resume' : 'start',
        seqStart: fcmpSeqStart(runDir, attempt),
        sessionId: meta.session_id,
        rawLineEvents: true,
      },
      { rasp: (event) => rasp.push(event), fcmp: (event) => fcmp.push(event) },
    );
  } finally {
    rasp.close();
    fcmp.close();
  }
  if (failures.list.length > 0) throw auditWriteFailed(audit, attempt, failures.list, null);
  const endedAt = new Date();
  const sealed: AttemptMeta = {
    ...meta,
    status: 'finished',
    timings: {
      ...meta.timings,
      ended_at: endedAt.toISOString(),
      duration_ms: Math.max(0, endedAt.getTime() - Date.parse(meta.timings.started_at)),
    },
    exit: meta.exit ?? { code: null, signal: null, timed_out: false, canceled: false },
    session_id: translation.summary.session_id ?? meta.session_id,
    completion: { state: 'failed', reason: 'HARNESS_INTERRUPTED' },
    error: {
      code: 'HARNESS_INTERRUPTED',
      message: `The harness process ${meta.owner!.pid} ended before attempt ${attempt} finished; sealed from its raw logs.`,
    },
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
export async function recoverRun(
  paths: Pick<HarnessPaths, 'runRoot' | 'agentHome'>,
  run: RunIndexEntry,
): Promise<RunIndexEntry> {
  await reclaimDeadLeases(paths.agentHome);
  await reclaimRunLeases(paths, run);
  return sealRun(paths, run);
}

/** Reclaims the dead owners' leases in the run's own HOME, where its engines' trust entries are (paths.ts, runHome). */
async function reclaimRunLeases(paths: Pick<HarnessPaths, 'agentHome'>, run: RunIndexEntry): Promise<void> {
  await reclaimDeadLeases(runHome(paths, run.run_id).home);
}

/** {@link recoverRun} without the leases: seals the run's orphaned attempts and updates its record. */
async function sealRun(paths: Pick<HarnessPaths, 'runRoot'>, run: RunIndexEntry): Promise<RunIndexEntry> {
  const sealed = await sealOrphanedAttempts(run.run_dir);
  if (sealed.length === 0) return run;
  const last = sealed[sealed.length - 1]!;
  return updateRun(
    paths.runRoot,
    run.run_id,
    {
      session_id: last.session_id ?? run.session_id,
      last_completion: 'failed',
    },
    last.attempt,
  );
}

/**
 * {@link recoverRun} over a listing (`runs`): each run as it is after sealing its orphaned attempts and reclaiming the
 * dead owners' leases in its own home (those of the managed home itself once).
 */
export async function recoverRuns(
  paths: Pick<HarnessPaths, 'runRoot' | 'agentHome'>,
  runs: readonly RunIndexEntry[],
): Promise<RunIndexEntry[]> {
  await reclaimDeadLeases(paths.agentHome);
  const recovered: RunIndexEntry[] = [];
  for (const run of runs) {
    await reclaimRunLeases(paths, run);
    recovered.push(await sealRun(paths, run));
  }
  return recovered;
}
