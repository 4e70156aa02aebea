/**
 * The run index: `<run_root>/index.json`, one entry per run, updated atomically under a lock.
 */
import { z } from 'zod';
import { EngineIdSchema, ModelModeSchema, TimestampSchema, TranslateModeSchema } from './common.js';

/** Version tag of the index file. */
export const RUN_INDEX_VERSION = 'agent-harness.index/1';

/** One run in the index. */
export const RunIndexEntrySchema = z.object({
  run_id: z.string().regex(/^\d{8}T\d{6}-[a-z]+-[0-9a-f]{8}$/),
  handle: z.string().regex(/^[0-9a-f]{8}$/),
  engine: EngineIdSchema,
  run_dir: z.string(),
  created_at: TimestampSchema,
  updated_at: TimestampSchema,
  attempts: z.number().int().nonnegative(),
  session_id: z.string().nullable(),
  translate_mode: TranslateModeSchema,
  model_mode: ModelModeSchema,
  /**
   * The run's model script, inline (`{"version": 1, "turns": [...]}`) so a resume from the CLI gets the same script
   * wherever the run was started (a test, a file since moved); a path in runs recorded before 0.2.
   */
  script: z.union([z.string(), z.object({ version: z.literal(1), turns: z.array(z.unknown()) }).passthrough()]).nullable(),
  last_completion: z.string().nullable(),
  /** The engine argv the run was started with (user-written), whose resume-safe flags every resume carries. */
  start_args: z.array(z.string()).nullable().default(null),
  /** The prompt of the default headless command the run was started with (null for a user-written argv). */
  prompt: z.string().nullable().default(null),
  /** Who started the run: the Vitest test's full name, when a test did (null from the CLI). */
  label: z.string().nullable().default(null),
});
/** One run in the index. */
export type RunIndexEntry = z.infer<typeof RunIndexEntrySchema>;

/** `<run_root>/index.json`. */
export const RunIndexSchema = z.object({
  version: z.literal(RUN_INDEX_VERSION),
  runs: z.array(RunIndexEntrySchema),
});
/** The run index. */
export type RunIndex = z.infer<typeof RunIndexSchema>;
