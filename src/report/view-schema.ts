/**
 * What the HTML report and `agent-harness view` show: runs, their attempts as timelines, the consistency report and
 * a baseline. One zod schema for the data embedded in the page and for the JSON API (`/api/v1/…`), so both say the
 * same thing and the server validates every response before it sends it.
 */
import * as z from 'zod';
import { ConsistencyReportSchema } from './schema.js';

/** Version tag of the view data and of the API's responses. */
export const VIEW_DATA_VERSION = 'agent-harness.view/1';

/** A tool call joined with its result, its command without the engine's wrapper. */
export const ViewToolSchema = z.object({
  callId: z.string(),
  kind: z.string(),
  name: z.string(),
  command: z.string().nullable(),
  /** The call's input as JSON text (bounded). */
  input: z.string().nullable(),
  status: z.string().nullable(),
  exitCode: z.number().int().nullable(),
  output: z.string().nullable(),
});
/** A tool call of the timeline. */
export type ViewTool = z.infer<typeof ViewToolSchema>;

/**
 * One item of an attempt's timeline. `t` is milliseconds since the attempt's first event. A `model` item is a request
 * the engine made to the scripted model (its `seq` negated, apart from the RASP events' numbers).
 */
export const TimelineItemSchema = z.object({
  seq: z.number().int(),
  ts: z.string(),
  t: z.number(),
  kind: z.enum(['started', 'message', 'reasoning', 'tool', 'diagnostic', 'error', 'exited', 'model']),
  text: z.string().nullable(),
  tool: ViewToolSchema.nullable(),
  /** A diagnostic's or error's code, the exit's code. */
  code: z.string().nullable(),
  level: z.string().nullable(),
});
/** One timeline item. */
export type TimelineItem = z.infer<typeof TimelineItemSchema>;

/** One request the engine made to the scripted model (body left out: it is in model-requests.N.jsonl). */
export const ViewModelRequestSchema = z.object({
  seq: z.number(),
  ts: z.string(),
  method: z.string(),
  path: z.string(),
  wire: z.string().nullable(),
  status: z.number(),
  kind: z.string(),
  turn: z.number().nullable(),
});

/** One attempt. `timeline` is null in a listing (fetch the attempt for it). */
export const ViewAttemptSchema = z.object({
  attempt: z.number().int().positive(),
  status: z.string(),
  launch: z.string().nullable(),
  startedAt: z.string().nullable(),
  durationMs: z.number().nullable(),
  completion: z.object({ state: z.string(), reason: z.string(), code: z.string().nullable() }).nullable(),
  exit: z.object({ code: z.number().nullable(), signal: z.string().nullable() }).nullable(),
  engineVersion: z.string().nullable(),
  /** false: a version the engine's adapter was not checked against (null when unknown). */
  engineVersionChecked: z.boolean().nullable().optional(),
  steps: z.record(z.string(), z.number()),
  toolCalls: z.number().int(),
  /** Normalized form of each tool call, in order: what the diffs align on. */
  toolKeys: z.array(z.string()),
  diagnostics: z.array(z.string()),
  fcmpCounts: z.record(z.string(), z.number()),
  files: z
    .object({ created: z.array(z.string()), modified: z.array(z.string()), deleted: z.array(z.string()) })
    .nullable(),
  gitPatch: z.string().nullable(),
  modelRequests: z.array(ViewModelRequestSchema),
  conformance: z.unknown().nullable(),
  timeline: z.array(TimelineItemSchema).nullable(),
  /** Why the timeline is left out of a report page (too large for one file), when it is. */
  omitted: z.string().nullable().optional(),
});
/** One attempt of the view. */
export type ViewAttempt = z.infer<typeof ViewAttemptSchema>;

/** One run: its case (what it was asked, or its test's case name), its attempts. */
export const ViewRunSchema = z.object({
  handle: z.string(),
  runId: z.string(),
  engine: z.string(),
  case: z.string(),
  label: z.string().nullable(),
  /** The test id when the run belongs to a test of the report. */
  testId: z.string().nullable(),
  createdAt: z.string(),
  /** The run directory, relative to the page (a link). */
  href: z.string().nullable(),
  running: z.boolean(),
  attempts: z.array(ViewAttemptSchema),
});
/** One run of the view. */
export type ViewRun = z.infer<typeof ViewRunSchema>;

/** Everything a page shows. */
export const ViewDataSchema = z.object({
  version: z.literal(VIEW_DATA_VERSION),
  generatedAt: z.string(),
  title: z.string(),
  report: ConsistencyReportSchema,
  runs: z.array(ViewRunSchema),
  baseline: z
    .object({
      label: z.string(),
      report: ConsistencyReportSchema,
      regressions: z.array(z.string()),
      changes: z.array(z.string()),
      /** The baseline's runs whose audit is still on disk (tool calls to align with now's). */
      runs: z.array(ViewRunSchema),
    })
    .nullable(),
  /** Set when served by `agent-harness view`: the API's base and token. */
  live: z.object({ api: z.string(), token: z.string() }).nullable(),
});
/** The page's data. */
export type ViewData = z.infer<typeof ViewDataSchema>;

/** `GET /api/v1/runs`. */
export const ApiRunsResponseSchema = z.object({
  version: z.literal(VIEW_DATA_VERSION),
  runs: z.array(ViewRunSchema),
});

/** `GET /api/v1/runs/:handle`. */
export const ApiRunResponseSchema = z.object({ version: z.literal(VIEW_DATA_VERSION), run: ViewRunSchema });

/** `GET /api/v1/runs/:handle/attempts/:n`. */
export const ApiAttemptResponseSchema = z.object({
  version: z.literal(VIEW_DATA_VERSION),
  handle: z.string(),
  attempt: ViewAttemptSchema,
});

/** `GET /api/v1/runs/:handle/attempts/:n/events`: the attempt's FCMP events as written. */
export const ApiEventsResponseSchema = z.object({
  version: z.literal(VIEW_DATA_VERSION),
  handle: z.string(),
  attempt: z.number().int(),
  events: z.array(z.unknown()),
  /** Null when the events were read; else why there are none (the FCMP file is missing, or not written yet). */
  note: z.string().nullable(),
});

/** An error of the API. */
export const ApiErrorSchema = z.object({ error: z.object({ code: z.string(), message: z.string() }) });
