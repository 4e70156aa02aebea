/**
 * RASP/1.0 — the run domain. Every fact the harness knows about one attempt: lifecycle, raw lines with byte
 * offsets into the audit logs, events parsed from the engine's native output, and diagnostics.
 * Raw evidence is never rewritten; FCMP is derived from this stream.
 */
import * as z from 'zod';
import { DiagnosticSchema, EngineIdSchema, RawRefSchema, TimestampSchema, UsageSchema } from './common.js';

import { RASP_VERSION } from './versions.js';

/** Version tag written in every RASP event (defined in `versions.ts`). */
export { RASP_VERSION };

/** Data of the parsed engine events: what the engine said, normalized across engines. */
export const ParsedEventSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('engine.session'), session_id: z.string().min(1) }),
  z.object({
    type: z.literal('engine.assistant.message'),
    message_id: z.string(),
    text: z.string(),
    /** false for a streamed partial (delta), true for a whole message. */
    final: z.boolean(),
  }),
  z.object({ type: z.literal('engine.reasoning'), item_id: z.string().nullable(), text: z.string() }),
  z.object({
    type: z.literal('engine.tool.call'),
    call_id: z.string(),
    /** Normalized kind: shell, file_change, mcp, web_search, skill, other. */
    kind: z.enum(['shell', 'file_change', 'mcp', 'web_search', 'skill', 'other']),
    name: z.string(),
    input: z.unknown(),
  }),
  z.object({
    type: z.literal('engine.tool.result'),
    call_id: z.string(),
    status: z.enum(['completed', 'failed', 'declined', 'in_progress']),
    output: z.string().nullable(),
    exit_code: z.number().int().nullable(),
  }),
  z.object({
    type: z.literal('engine.file.change'),
    changes: z.array(z.object({ path: z.string(), kind: z.string() })),
  }),
  z.object({ type: z.literal('engine.usage'), usage: UsageSchema }),
  z.object({ type: z.literal('engine.turn.started') }),
  z.object({
    type: z.literal('engine.turn.end'),
    status: z.enum(['completed', 'failed']),
    error: z.string().nullable(),
  }),
  z.object({ type: z.literal('engine.error'), message: z.string(), fatal: z.boolean() }),
  /**
   * The skills the engine offered the model: announced by the engine itself (`engine`: claude's init event lists
   * them) or found in its first real model request (`model_request`, every engine, scripted mode).
   */
  z.object({
    type: z.literal('engine.skills.offered'),
    skills: z.array(z.string()),
    source: z.enum(['engine', 'model_request']),
  }),
]);
/** A parsed engine event (before it is wrapped in a RASP envelope). */
export type ParsedEvent = z.infer<typeof ParsedEventSchema>;

/** Lifecycle, raw and diagnostic event data, plus the parsed ones. */
export const RaspDataSchema = z.discriminatedUnion('type', [
  z.object({
    type: z.literal('lifecycle.started'),
    launch: z.enum(['start', 'resume', 'passthrough']),
    argv: z.array(z.string()),
    cwd: z.string(),
    pid: z.number().int().nullable(),
    io: z.enum(['split', 'pty', 'passthrough']),
  }),
  z.object({
    type: z.literal('lifecycle.exited'),
    exit_code: z.number().int().nullable(),
    signal: z.string().nullable(),
    timed_out: z.boolean(),
    canceled: z.boolean(),
    duration_ms: z.number().nonnegative(),
  }),
  z.object({ type: z.literal('raw.line'), text: z.string() }),
  z.object({ type: z.literal('diagnostic'), diagnostic: DiagnosticSchema }),
  ...ParsedEventSchema.options,
]);
/** RASP event data. */
export type RaspData = z.infer<typeof RaspDataSchema>;

/** One RASP event as written to `.audit/rasp.N.jsonl`. */
export const RaspEventSchema = z.object({
  protocol_version: z.literal(RASP_VERSION),
  run_id: z.string(),
  attempt: z.number().int().positive(),
  /** Strictly increasing inside one attempt, from 1. */
  seq: z.number().int().positive(),
  ts: TimestampSchema,
  engine: EngineIdSchema,
  data: RaspDataSchema,
  raw_ref: RawRefSchema.nullable(),
});
/** One RASP event. */
export type RaspEvent = z.infer<typeof RaspEventSchema>;
