/** The live recording of a harness run (versioned, zod-validated) and its file I/O. */
import { mkdir, rename, writeFile } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import * as z from 'zod';
import { AgentHarnessError, isAgentHarnessError } from '../errors/index.js';
import { MAX_AUDIT_FILE_BYTES, readInputText } from '../runtime/bounded-input.js';

/** One recorded entry: an agent call (args and output), a generator step or an agent's narrative, in the order they happened. */
export const RecordingEntrySchema = z.discriminatedUnion('kind', [
  z.object({
    kind: z.literal('call'),
    agent: z.string(),
    method: z.string(),
    args: z.array(z.unknown()),
    output: z.unknown().optional(),
    error: z.string().optional(),
    /** The audited attempt behind a provider-backed call, so a replayed event links to it. */
    handle: z.string().optional(),
    /** The method returned a plain value (not a promise); replay answers it synchronously too. */
    sync: z.boolean().optional(),
  }),
  z.object({
    kind: z.literal('step'),
    step: z.string(),
    input: z.unknown().optional(),
    output: z.unknown().optional(),
  }),
  z.object({ kind: z.literal('narrative'), agent: z.string(), text: z.string(), method: z.string().optional() }),
]);

/** A whole recording file. */
export const RecordingSchema = z.object({
  version: z.literal(1),
  harness: z.string(),
  input: z.unknown().optional(),
  entries: z.array(RecordingEntrySchema),
});

/** One recorded entry. */
export type RecordingEntry = z.infer<typeof RecordingEntrySchema>;
/** A recording file's content. */
export type Recording = z.infer<typeof RecordingSchema>;

/**
 * Where a test's recording lives, after Vitest's snapshot convention:
 * `<dir of test>/__recordings__/<test file name>/<name>.json`.
 */
export function resolveRecordingPath(testFile: string, name: string): string {
  const safe = name.replace(/[^A-Za-z0-9._-]+/g, '-');
  return join(dirname(testFile), '__recordings__', basename(testFile), `${safe}.json`);
}

/** Writes a recording atomically (temp file + rename) so a crash never leaves half a file. */
export async function writeRecording(path: string, recording: Recording): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  const temp = `${path}.${process.pid}.tmp`;
  await writeFile(temp, `${JSON.stringify(recording, null, 2)}\n`);
  await rename(temp, path);
}

/** Reads and validates a recording; a missing or malformed file is FLUENT_RECORDING_INVALID. */
export async function readRecording(path: string): Promise<Recording> {
  let text: string;
  try {
    text = await readInputText(path, {
      what: 'recording',
      maxBytes: MAX_AUDIT_FILE_BYTES,
      unreadableCode: 'FLUENT_RECORDING_INVALID',
    });
  } catch (cause) {
    // A FIFO, a device or a directory is refused at once (bounded-input.ts), with its own code.
    if (isAgentHarnessError(cause, 'INPUT_NOT_REGULAR_FILE') || isAgentHarnessError(cause, 'INPUT_TOO_LARGE'))
      throw cause;
    throw new AgentHarnessError(
      'FLUENT_RECORDING_INVALID',
      `Recording ${path} cannot be read; run the harness live first.`,
      { cause, details: { path } },
    );
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (cause) {
    throw new AgentHarnessError('FLUENT_RECORDING_INVALID', `Recording ${path} is not JSON.`, {
      cause,
      details: { path },
    });
  }
  const result = RecordingSchema.safeParse(parsed);
  if (!result.success) {
    throw new AgentHarnessError(
      'FLUENT_RECORDING_INVALID',
      `Recording ${path} does not match the recording schema: ${z.prettifyError(result.error)}`,
      { details: { path } },
    );
  }
  return result.data;
}

/** Describes an entry for mismatch messages, e.g. `planner.execute`, `step "build"` or `narrative of planner`. */
export function describeRecordingEntry(entry: RecordingEntry): string {
  if (entry.kind === 'call') return `${entry.agent}.${entry.method}`;
  return entry.kind === 'step' ? `step "${entry.step}"` : `narrative of ${entry.agent}`;
}
