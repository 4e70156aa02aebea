/**
 * The run index: `<run_root>/index.jsonl`, a cache of every run's `.audit/run.json`. An append-only JSON-lines log:
 * a header line ({@link RunIndexLogHeaderSchema}), then one {@link RunIndexEntrySchema} line per change of a run,
 * appended under a lock; the last line of a run id is the run as of its latest change, and the runs keep the order
 * of their first lines. Compacted (rewritten atomically, one line per run) when it holds many more lines than runs.
 * Before the log, the index was `<run_root>/index.json` ({@link RunIndexSchema}); the harness migrates it.
 */
import * as z from 'zod';
import { EngineIdSchema, ModelModeSchema, TimestampSchema, TranslateModeSchema } from './common.js';
import { RUN_INDEX_LOG_VERSION, RUN_INDEX_VERSION } from './versions.js';

// The version tags live in versions.ts (no zod): the run index log reads and writes them on every start.
export { RUN_INDEX_LOG_VERSION, RUN_INDEX_VERSION };

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
  script: z
    .union([z.string(), z.object({ version: z.literal(1), turns: z.array(z.unknown()) }).passthrough()])
    .nullable(),
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

/** The legacy run index, `<run_root>/index.json` (pretty JSON); read only to migrate it to the log. */
export const RunIndexSchema = z.object({
  version: z.literal(RUN_INDEX_VERSION),
  runs: z.array(RunIndexEntrySchema),
});
/** The legacy run index. */
export type RunIndex = z.infer<typeof RunIndexSchema>;

/**
 * The first line of `<run_root>/index.jsonl`. `generation` is new at every rewrite of the file (creation,
 * compaction, rebuild), so a process that remembers how far it read one file never mistakes another for it.
 */
export const RunIndexLogHeaderSchema = z.object({
  version: z.literal(RUN_INDEX_LOG_VERSION),
  generation: z.string().min(1),
});
/** The header line of the index log. */
export type RunIndexLogHeader = z.infer<typeof RunIndexLogHeaderSchema>;
