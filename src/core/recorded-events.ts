/**
 * A recorded attempt's events read back for a view (the viewer, a session/load replay): its `rasp.N.jsonl` and
 * `fcmp.N.jsonl`, interleaved in their live order (`translate/attempt-events.ts`). Both files are read as inputs
 * (a FIFO or a directory in their place is skipped, never waited on); a line that is not an event (a torn last line
 * of a running attempt, a damaged one) is skipped, never thrown.
 */
import fs from 'node:fs';
import { FcmpEventSchema, RaspEventSchema, type FcmpEvent, type RaspEvent } from '../protocol/index.js';
import { readLinesSync } from '../runtime/bounded-input.js';
import { interleaveEvents, type AttemptEvent } from '../translate/attempt-events.js';
import { attemptAuditPaths } from './audit-files.js';

/**
 * A raw output line's RASP event, known without parsing it: in JSON text this sequence can only be the event's own
 * structure (inside a string its quotes would be escaped). Half of a RASP file is such lines, the largest ones.
 */
export function isRawLineEvent(line: string): boolean {
  return line.includes('"data":{"type":"raw.line"');
}

/** The records of a JSONL audit file that `parse` accepts, in order; nothing when it cannot be read. */
function* records<T>(
  file: string,
  parse: (value: unknown) => T | null,
  skip?: (line: string) => boolean,
): Generator<T> {
  if (!fs.existsSync(file)) return;
  try {
    for (const line of readLinesSync(file, { what: 'audit file' })) {
      if (line.trim() === '' || skip?.(line)) continue;
      let value: unknown;
      try {
        value = JSON.parse(line);
      } catch {
        continue;
      }
      const event = parse(value);
      if (event !== null) yield event;
    }
  } catch {
    // Not a regular file: nothing more to read.
  }
}

/** Parses a RASP event read back (null when it is not one). */
export function raspEventOf(value: unknown): RaspEvent | null {
  const parsed = RaspEventSchema.safeParse(value);
  return parsed.success ? parsed.data : null;
}

/** Parses an FCMP event read back (null when it is not one). */
export function fcmpEventOf(value: unknown): FcmpEvent | null {
  const parsed = FcmpEventSchema.safeParse(value);
  return parsed.success ? parsed.data : null;
}

/**
 * Attempt `attempt` of `runDir` as the one ordered stream its views map (null when it has no RASP file);
 * `rawLines: false` leaves the raw output lines out (a view that does not show them reads half as much).
 */
export function readRecordedEvents(
  runDir: string,
  attempt: number,
  options: { rawLines?: boolean } = {},
): Iterable<AttemptEvent> | null {
  const audit = attemptAuditPaths(runDir, attempt);
  if (!fs.existsSync(audit.rasp)) return null;
  const fcmp = [...records(audit.fcmp, fcmpEventOf)];
  return interleaveEvents(
    records(audit.rasp, raspEventOf, options.rawLines === false ? isRawLineEvent : undefined),
    fcmp,
  );
}
