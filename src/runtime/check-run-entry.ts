/**
 * The check of a run's record (`RunIndexEntrySchema`: a line of `index.jsonl`, a `run.json`): what the schema
 * accepts, as it gives it (its keys, defaults filled, unknown keys dropped).
 */
import { RunIndexEntrySchema, type RunIndexEntry } from '../protocol/run-index.js';

/** The run record `value` as `RunIndexEntrySchema` parses it, or undefined where the schema refuses it. */
export function checkRunEntry(value: unknown): RunIndexEntry | undefined {
  const parsed = RunIndexEntrySchema.safeParse(value);
  return parsed.success ? parsed.data : undefined;
}

/** The run record `value` as the schema parses it; the schema's own error (what is wrong, said by zod) otherwise. */
export function parseRunEntry(value: unknown): RunIndexEntry {
  return RunIndexEntrySchema.parse(value);
}
