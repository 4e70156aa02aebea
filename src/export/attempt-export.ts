/**
 * Reads what the exports need of one recorded attempt: its FCMP (required), its RASP parsed events (reasoning,
 * usage, whole tool inputs and outputs; raw lines are skipped), its meta and the run's prompt.
 */
import fs from 'node:fs';
import { attemptAuditPaths } from '../core/audit-files.js';
import { isEngineId, loadTranslationAdapter } from '../engines/registry.js';
import { AgentHarnessError } from '../errors/index.js';
import {
  FcmpEventSchema,
  RaspEventSchema,
  type AttemptMeta,
  type FcmpEvent,
  type RaspEvent,
  type RunIndexEntry,
} from '../protocol/index.js';
import { readLinesSync } from '../runtime/bounded-input.js';
import { readAttemptMetaOrNull } from '../runtime/read-attempt-meta.js';
import type { AtifContext, AtifEvents } from './atif.js';

/** One attempt, ready for {@link buildAtifTrajectory} or {@link buildOtlpSpans}. */
export interface AttemptExport {
  events: AtifEvents;
  context: AtifContext;
  /** The attempt's meta, null when missing or unreadable. */
  meta: AttemptMeta | null;
}

async function readJsonLines<T>(
  file: string,
  what: string,
  parse: (value: unknown) => T | null,
  skip?: (line: string) => boolean,
): Promise<T[]> {
  const out: T[] = [];
  let number = 0;
  for (const line of readLinesSync(file, { what, unreadableCode: 'EXPORT_FAILED', noFollow: true }, true)) {
    number += 1;
    if (line.trim() === '' || skip?.(line)) continue;
    let value: T | null;
    try {
      value = parse(JSON.parse(line));
    } catch (error) {
      throw new AgentHarnessError(
        'EXPORT_FAILED',
        `Line ${number} of the ${what} ${file} is not a valid event: ${(error as Error).message.split('\n')[0]}`,
        { cause: error, details: { file, line: number } },
      );
    }
    if (value !== null) out.push(value);
  }
  return out;
}

/** Reads attempt `attempt` of `run` for export; `EXPORT_FAILED` when its FCMP file is missing or damaged. */
export async function readAttemptExport(run: RunIndexEntry, attempt: number): Promise<AttemptExport> {
  const audit = attemptAuditPaths(run.run_dir, attempt);
  if (!fs.existsSync(audit.fcmp)) {
    throw new AgentHarnessError(
      'EXPORT_FAILED',
      `Run ${run.handle} has no FCMP for attempt ${attempt} (${audit.fcmp} is missing): the attempt was never recorded or is still running.`,
      { details: { file: audit.fcmp, attempt } },
    );
  }
  const fcmp = await readJsonLines<FcmpEvent>(audit.fcmp, 'FCMP file', (v) => FcmpEventSchema.parse(v));
  const rasp = fs.existsSync(audit.rasp)
    ? await readJsonLines<RaspEvent>(
        audit.rasp,
        'RASP file',
        (v) => RaspEventSchema.parse(v),
        // Raw lines are most of the file and the exports never use them: not parsed at all.
        (line) => line.includes('"type":"raw.line"'),
      )
    : null;
  const meta = await readAttemptMetaOrNull(audit.meta);
  const model = meta?.agent_options?.model;
  // How the engine counts cached tokens is its adapter's fact (a run of an engine not registered here: none).
  const cacheReportedApart = isEngineId(run.engine)
    ? (await loadTranslationAdapter(run.engine)).cacheReportedApart === true
    : false;
  const context: AtifContext = {
    runId: run.run_id,
    attempt,
    engine: run.engine,
    engineVersion: meta?.engine_version ?? null,
    modelName: typeof model === 'string' ? model : null,
    // A start's message is the run's prompt; a resume's reply is in its FCMP (user.input.replied).
    prompt: (meta ? meta.launch === 'start' : attempt === 1) ? run.prompt : null,
    sessionId: meta?.session_id ?? run.session_id,
    completion: meta?.completion ?? null,
    usage: meta?.usage ?? null,
    durationMs: meta?.timings.duration_ms ?? null,
    handle: run.handle,
    cacheReportedApart,
  };
  return { events: { fcmp, rasp }, context, meta };
}
