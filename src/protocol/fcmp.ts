/**
 * FCMP/1.0 — the conversation domain, derived from RASP (0..N FCMP events per RASP event).
 * Invariants: `seq` strictly increasing per run (across attempts); `conversation.completed` and
 * `conversation.failed` are exclusive within an attempt; a `assistant.message.final` closes one message id once.
 */
import * as z from 'zod';
import { EngineIdSchema, RawRefSchema, TimestampSchema } from './common.js';

import { FCMP_VERSION } from './versions.js';

/** Version tag written in every FCMP envelope (defined in `versions.ts`). */
export { FCMP_VERSION };

/** FCMP event types. */
export const FcmpTypeSchema = z.enum([
  'conversation.started',
  'assistant.message.delta',
  'assistant.message.final',
  'user.input.required',
  'user.input.replied',
  'conversation.completed',
  'conversation.failed',
  'diagnostic.warning',
  'tool.call',
  'tool.result',
]);
/** An FCMP event type. */
export type FcmpType = z.infer<typeof FcmpTypeSchema>;

/** Failure categories of `conversation.failed`. */
export const FailureCategorySchema = z.enum([
  'auth',
  'rate_limit',
  'model',
  'context_length',
  'network',
  'timeout',
  'canceled',
  'engine_crash',
  'protocol',
  'unknown',
]);
/** A failure category. */
export type FailureCategory = z.infer<typeof FailureCategorySchema>;

const envelope = {
  protocol_version: z.literal(FCMP_VERSION),
  run_id: z.string(),
  seq: z.number().int().positive(),
  ts: TimestampSchema,
  engine: EngineIdSchema,
  session_id: z.string().nullable(),
  meta: z.object({ attempt: z.number().int().positive() }),
  raw_ref: RawRefSchema.nullable(),
};

/** One FCMP event as written to `.audit/fcmp.N.jsonl`. */
export const FcmpEventSchema = z.discriminatedUnion('type', [
  z.object({
    ...envelope,
    type: z.literal('conversation.started'),
    data: z.object({ launch: z.enum(['start', 'resume', 'passthrough']) }),
  }),
  z.object({
    ...envelope,
    type: z.literal('assistant.message.delta'),
    data: z.object({ message_id: z.string(), text: z.string() }),
  }),
  z.object({
    ...envelope,
    type: z.literal('assistant.message.final'),
    data: z.object({ message_id: z.string(), text: z.string() }),
  }),
  z.object({ ...envelope, type: z.literal('user.input.required'), data: z.object({ reason: z.string() }) }),
  z.object({ ...envelope, type: z.literal('user.input.replied'), data: z.object({ text: z.string() }) }),
  z.object({ ...envelope, type: z.literal('conversation.completed'), data: z.object({ reason: z.string() }) }),
  z.object({
    ...envelope,
    type: z.literal('conversation.failed'),
    data: z.object({ category: FailureCategorySchema, code: z.string(), message: z.string() }),
  }),
  z.object({
    ...envelope,
    type: z.literal('diagnostic.warning'),
    // `level` is the RASP diagnostic's level; optional so FCMP written before it was carried still validates.
    data: z.object({ code: z.string(), message: z.string(), level: z.enum(['info', 'warning', 'error']).optional() }),
  }),
  /** The agent called a tool: `command` is the shell command without the engine's wrapper (null for other tools). */
  z.object({
    ...envelope,
    type: z.literal('tool.call'),
    data: z.object({
      call_id: z.string(),
      kind: z.string(),
      name: z.string(),
      command: z.string().nullable(),
      input_excerpt: z.string().nullable(),
    }),
  }),
  /**
   * A tool's result; a shell result's `exit_code` and `status` are normalized across engines. `status` is a string
   * (`completed`, `failed`, `declined`, `in_progress`, and `abandoned`: the call had no result when the attempt ended,
   * its process outlived the turn); a new value is no schema change, so fcmp/1.0 stays.
   */
  z.object({
    ...envelope,
    type: z.literal('tool.result'),
    data: z.object({
      call_id: z.string(),
      status: z.string(),
      exit_code: z.number().int().nullable(),
      output_excerpt: z.string().nullable(),
    }),
  }),
]);
/** One FCMP event. */
export type FcmpEvent = z.infer<typeof FcmpEventSchema>;
