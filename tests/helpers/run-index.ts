/**
 * Reading `<run_root>/index.jsonl` as a test sees it on disk, independently of the run store's own reader: the
 * header, every line, and the runs folded (the last line of a run id wins, runs in the order of their first line).
 */
import fs from 'node:fs';
import path from 'node:path';
import {
  RunIndexEntrySchema,
  RunIndexLogHeaderSchema,
  type RunIndexEntry,
  type RunIndexLogHeader,
} from '../../src/protocol/index.js';

/** The index log of a run root. */
export function indexLogFile(runRoot: string): string {
  return path.join(runRoot, 'index.jsonl');
}

/** The index log parsed strictly: a valid header, then only valid, newline-terminated entry lines. */
export function readIndexLog(runRoot: string): {
  text: string;
  header: RunIndexLogHeader;
  lines: RunIndexEntry[];
  runs: RunIndexEntry[];
} {
  const text = fs.readFileSync(indexLogFile(runRoot), 'utf8');
  if (!text.endsWith('\n')) throw new Error(`index log of ${runRoot} does not end with a newline`);
  const [first, ...rest] = text.slice(0, -1).split('\n');
  const header = RunIndexLogHeaderSchema.parse(JSON.parse(first!));
  const lines = rest.map((line) => RunIndexEntrySchema.parse(JSON.parse(line)));
  const runs = new Map<string, RunIndexEntry>();
  for (const line of lines) runs.set(line.run_id, line);
  return { text, header, lines, runs: [...runs.values()] };
}

/** The runs of the index log (see {@link readIndexLog}). */
export function readIndexRuns(runRoot: string): RunIndexEntry[] {
  return readIndexLog(runRoot).runs;
}
