/**
 * Shared zod building blocks for every protocol of agent-harness.
 * This folder imports nothing but zod: it is the contract the runtime, the translators, the reporters and
 * external tools depend on.
 */
import * as z from 'zod';
import { ENGINE_ID_PATTERN } from './versions.js';

/**
 * An engine identifier: its form only. The engines that exist are listed by the engine registry
 * (`src/engines/registry.ts`), which refuses an unknown id with ENGINE_UNKNOWN where ids come in from users.
 */
export const EngineIdSchema = z.string().regex(ENGINE_ID_PATTERN, 'an engine id is 1-32 lower-case letters');
/** An engine identifier (see {@link EngineIdSchema}). */
export type EngineId = string;

/** The raw streams the harness records. */
export const StreamNameSchema = z.enum(['stdout', 'stderr', 'pty']);
/** A raw stream name. */
export type StreamName = z.infer<typeof StreamNameSchema>;

/** Byte range `[from, to)` inside one raw audit log of the same attempt. */
export const RawRefSchema = z.object({
  stream: StreamNameSchema,
  from: z.number().int().nonnegative(),
  to: z.number().int().nonnegative(),
});
/** A reference into a raw log. */
export type RawRef = z.infer<typeof RawRefSchema>;

/** ISO-8601 timestamp string. */
export const TimestampSchema = z.string().min(10);

/** A diagnostic: a doubtful parse or an environment problem, with a stable code. */
export const DiagnosticSchema = z.object({
  code: z.string().regex(/^[A-Z][A-Z0-9_]*$/),
  message: z.string(),
  level: z.enum(['info', 'warning', 'error']).default('warning'),
});
/** A diagnostic. */
export type Diagnostic = z.infer<typeof DiagnosticSchema>;

/** Token usage as far as the engine reported it. */
export const UsageSchema = z.object({
  input_tokens: z.number().int().nonnegative().nullable(),
  output_tokens: z.number().int().nonnegative().nullable(),
  cached_input_tokens: z.number().int().nonnegative().nullable().optional(),
  reasoning_output_tokens: z.number().int().nonnegative().nullable().optional(),
});
/** Token usage. */
export type Usage = z.infer<typeof UsageSchema>;

/** Translate view levels: 0 raw, 1 RASP, 2 FCMP, 3 simulated frontend markdown. */
export const TranslateModeSchema = z.union([z.literal(0), z.literal(1), z.literal(2), z.literal(3)]);
/** A translate view level. */
export type TranslateMode = z.infer<typeof TranslateModeSchema>;

/** Where the model comes from for a run. */
export const ModelModeSchema = z.enum(['scripted', 'replay', 'record', 'live']);
/** A model mode. */
export type ModelMode = z.infer<typeof ModelModeSchema>;
