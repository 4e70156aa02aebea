/**
 * One attempt of a run directory read for the HTML report and `agent-harness view`: its meta, timeline (from
 * `rasp.N.jsonl` and `fcmp.N.jsonl`, `core/recorded-events.ts`), fs diff, git patch, model requests and conformance report. Every file is read as an input (a FIFO
 * or a directory in its place is skipped, never waited on) and within a size limit; what cannot be read is left
 * out, never thrown, so one damaged attempt never hides the others.
 */
import fs from 'node:fs';
import path from 'node:path';
import { readRecordedEvents } from '../core/recorded-events.js';
import type { RunIndexEntry } from '../protocol/index.js';
import { MAX_AUDIT_FILE_BYTES, readInputBytesSync, readLinesSync } from '../runtime/bounded-input.js';
import { AUDIT_DIR, attemptNumbers } from '../runtime/run-store.js';
import { isFcmpEvent } from '../translate/attempt-events.js';
import { boundText, TimelineBuilder, toolKey } from './rasp-timeline.js';
import type { TimelineItem, ViewAttempt, ViewRun } from './view-schema.js';

/** Longest git patch (characters) shown. */
const MAX_PATCH_TEXT = 512 * 1024;

function auditFile(runDir: string, name: string, n: number, ext: string): string {
  return path.join(runDir, AUDIT_DIR, `${name}.${n}.${ext}`);
}

function readJson(file: string): unknown {
  try {
    return JSON.parse(
      readInputBytesSync(file, { what: 'audit file', maxBytes: MAX_AUDIT_FILE_BYTES }).toString('utf8'),
    );
  } catch {
    return null;
  }
}

function readText(file: string, max: number): string | null {
  try {
    return boundText(
      readInputBytesSync(file, { what: 'audit file', maxBytes: MAX_AUDIT_FILE_BYTES }).toString('utf8'),
      max,
    );
  } catch {
    return null;
  }
}

/** A raw output line's RASP event, known without parsing it (see `core/recorded-events.ts`). */
export { isRawLineEvent } from '../core/recorded-events.js';

function* jsonLines(file: string): Generator<unknown> {
  if (!fs.existsSync(file)) return;
  try {
    for (const line of readLinesSync(file, { what: 'audit file' })) {
      if (line.trim() === '') continue;
      try {
        yield JSON.parse(line);
      } catch {
        // A torn last line of a running attempt, or a damaged one: skipped.
      }
    }
  } catch {
    // Not a regular file: nothing to read.
  }
}

const asRecord = (value: unknown): Record<string, unknown> =>
  value !== null && typeof value === 'object' ? (value as Record<string, unknown>) : {};
const str = (value: unknown): string | null => (typeof value === 'string' ? value : null);
const num = (value: unknown): number | null => (typeof value === 'number' && Number.isFinite(value) ? value : null);

/** The model requests of an attempt, as logged. */
function readModelRequests(runDir: string, n: number): Record<string, unknown>[] {
  return [...jsonLines(auditFile(runDir, 'model-requests', n, 'jsonl'))].map(asRecord);
}

/** The timeline with the model requests (not the side ones) put in at their time. */
function withModelRequests(items: TimelineItem[], requests: Record<string, unknown>[]): TimelineItem[] {
  const first = items[0] ? Date.parse(items[0].ts) - items[0].t : Number.NaN;
  if (!Number.isFinite(first)) return items;
  const model: TimelineItem[] = requests
    .filter(
      (r) =>
        r.response_kind !== 'side' &&
        typeof r.seq === 'number' &&
        Number.isFinite(Date.parse(str(r.started_ts) ?? str(r.ts) ?? '')),
    )
    .map((r) => {
      const ts = (str(r.started_ts) ?? str(r.ts))!;
      return {
        seq: -(r.seq as number),
        ts,
        t: Math.max(0, Date.parse(ts) - first),
        kind: 'model',
        text: `${str(r.method) ?? ''} ${str(r.path) ?? ''} → ${num(r.status) ?? ''} ${str(r.response_kind) ?? ''}`,
        tool: null,
        code: num(r.turn_index) === null ? null : `turn ${r.turn_index}`,
        level: null,
      };
    });
  return [...items, ...model].sort((a, b) => a.t - b.t);
}

/** Reads attempt `n` of `runDir`; `timeline: false` leaves the timeline out (a listing). */
export function readAttemptView(runDir: string, n: number, options: { timeline?: boolean } = {}): ViewAttempt {
  const meta = asRecord(readJson(auditFile(runDir, 'meta', n, 'json')));
  const conformance = readJson(auditFile(runDir, 'conformance-report', n, 'json'));
  const conf = asRecord(conformance);
  const requests = readModelRequests(runDir, n);
  const builder = new TimelineBuilder();
  let launch: string | null = null;
  for (const event of readRecordedEvents(runDir, n, { rawLines: false }) ?? []) {
    if (!isFcmpEvent(event) && event.data.type === 'lifecycle.started') launch = event.data.launch;
    builder.push(event);
  }
  const timeline = withModelRequests(builder.items, requests);
  const tools = builder.items.flatMap((item) => (item.tool ? [item.tool] : []));
  const diagnostics = builder.items.filter((item) => item.kind === 'diagnostic').map((item) => item.code ?? '');
  const diff = asRecord(readJson(auditFile(runDir, 'fs-diff', n, 'json')));
  const list = (value: unknown): string[] =>
    Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : [];
  const completion = asRecord(meta.completion);
  const exit = meta.exit ? asRecord(meta.exit) : null;
  const timings = asRecord(meta.timings);
  const steps = Object.fromEntries(
    Object.entries(asRecord(timings.steps)).filter((e): e is [string, number] => typeof e[1] === 'number'),
  );
  const counts = Object.fromEntries(
    Object.entries(asRecord(conf.fcmp_counts)).filter((e): e is [string, number] => typeof e[1] === 'number'),
  );
  return {
    attempt: n,
    status: str(meta.status) ?? (conformance ? 'finished' : 'unknown'),
    launch: launch ?? str(conf.launch),
    startedAt: str(timings.started_at),
    durationMs: num(timings.duration_ms),
    completion: meta.completion
      ? {
          state: str(completion.state) ?? 'unknown',
          reason: str(completion.reason) ?? '',
          code: str(completion.code),
        }
      : null,
    exit: exit ? { code: num(exit.code), signal: str(exit.signal) } : null,
    engineVersion: str(meta.engine_version),
    engineVersionChecked: typeof meta.engine_version_checked === 'boolean' ? meta.engine_version_checked : null,
    steps,
    toolCalls: tools.length,
    toolKeys: tools.map(toolKey),
    diagnostics,
    fcmpCounts: counts,
    files:
      diff.created || diff.modified || diff.deleted
        ? { created: list(diff.created), modified: list(diff.modified), deleted: list(diff.deleted) }
        : null,
    gitPatch: readText(auditFile(runDir, 'git-diff', n, 'patch'), MAX_PATCH_TEXT),
    modelRequests: requests.map((r) => ({
      seq: num(r.seq) ?? 0,
      ts: str(r.ts) ?? '',
      method: str(r.method) ?? '',
      path: str(r.path) ?? '',
      wire: str(r.wire),
      status: num(r.status) ?? 0,
      kind: str(r.response_kind) ?? '',
      turn: num(r.turn_index),
    })),
    conformance: conformance ?? null,
    timeline: options.timeline === false ? null : timeline,
  };
}

/**
 * Attempt summaries (no timeline) already read, by attempt, with the sizes and times of the files they came from:
 * `agent-harness view` reads a finished attempt once, not at every listing.
 */
export type AttemptViewCache = Map<string, { stamp: string; view: ViewAttempt }>;

function stampOf(runDir: string, n: number): string {
  return ['meta', 'rasp', 'conformance-report', 'fs-diff', 'model-requests']
    .map((name) => {
      try {
        const stat = fs.statSync(
          auditFile(runDir, name, n, name === 'rasp' || name === 'model-requests' ? 'jsonl' : 'json'),
        );
        return `${stat.size}:${stat.mtimeMs}`;
      } catch {
        return '-';
      }
    })
    .join('/');
}

function readAttemptSummary(runDir: string, n: number, cache: AttemptViewCache): ViewAttempt {
  const key = `${runDir}\u0000${n}`;
  const stamp = stampOf(runDir, n);
  const hit = cache.get(key);
  if (hit && hit.stamp === stamp) return hit.view;
  const view = readAttemptView(runDir, n, { timeline: false });
  cache.set(key, { stamp, view });
  return view;
}

/** A run and its attempts; `href` is the run directory relative to `pageDir` (null: no link). */
export function readRunView(
  run: RunIndexEntry,
  options: {
    pageDir?: string | null;
    timeline?: boolean;
    caseName?: string;
    testId?: string | null;
    /** Summaries read before (with `timeline: false` only). */
    cache?: AttemptViewCache;
  } = {},
): ViewRun {
  const cache = options.timeline === false ? options.cache : undefined;
  const attempts = attemptNumbers(run.run_dir).map((n) =>
    cache ? readAttemptSummary(run.run_dir, n, cache) : readAttemptView(run.run_dir, n, options),
  );
  const href = options.pageDir
    ? path.relative(options.pageDir, run.run_dir).split(path.sep).map(encodeURIComponent).join('/')
    : null;
  return {
    handle: run.handle,
    runId: run.run_id,
    engine: run.engine,
    case: options.caseName ?? run.label ?? run.prompt ?? (run.start_args ?? []).join(' ') ?? run.run_id,
    label: run.label,
    testId: options.testId ?? null,
    createdAt: run.created_at,
    href: href === null ? null : `${href}/`,
    running: attempts.some((a) => a.status === 'running'),
    attempts,
  };
}
