/**
 * One recorded attempt exported as a document: ATIF v1.7 (validated against the RFC's schema before it is
 * returned) or OTLP/JSON spans (sent to `OTEL_EXPORTER_OTLP_ENDPOINT` too when it is set). Used by the `export`
 * command and the Vitest plugin's per-test export.
 */
import fs from 'node:fs';
import path from 'node:path';
import { AgentHarnessError } from '../errors/index.js';
import type { RunIndexEntry } from '../protocol/index.js';
import { writeFileAtomic } from '../runtime/atomic-write.js';
import { buildAtifTrajectory } from './atif.js';
import { AtifTrajectorySchema, type AtifTrajectory } from './atif-schema.js';
import { readAttemptExport, type AttemptExport } from './attempt-export.js';
import type { OtlpAttempt } from './otlp.js';

/** The export formats. */
export const EXPORT_FORMATS = ['atif', 'otlp'] as const;
/** An export format. */
export type ExportFormat = (typeof EXPORT_FORMATS)[number];

/** The ATIF trajectory of a read attempt, checked against the schema (a failure is a bug of the export). */
export function atifOf(attempt: AttemptExport): AtifTrajectory {
  const trajectory = buildAtifTrajectory(attempt.events, attempt.context);
  const parsed = AtifTrajectorySchema.safeParse(trajectory);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new AgentHarnessError(
      'EXPORT_FAILED',
      `The ATIF trajectory of ${attempt.context.runId} attempt ${attempt.context.attempt} does not match ATIF v1.7 at ${issue?.path.join('.') || 'its root'}: ${issue?.message ?? 'invalid'}.`,
      { details: { issues: parsed.error.issues.slice(0, 10) } },
    );
  }
  return trajectory;
}

/** What {@link exportAttempt} made. */
export interface ExportedDocument {
  format: ExportFormat;
  /** The document, as JSON text ending with a newline. */
  text: string;
  /** Spans sent to the OTLP endpoint (otlp with an endpoint set), else 0. */
  sent: number;
  /** The endpoint they went to. */
  endpoint: string | null;
}

/** Options of {@link exportAttempt}. */
export interface ExportAttemptOptions {
  /** Send OTLP spans when `OTEL_EXPORTER_OTLP_ENDPOINT` is set (default true). */
  send?: boolean;
  /** Extra evaluations for the OTLP agent span (a test's verdict). */
  evaluations?: OtlpAttempt['evaluations'];
  /** `service.version` of the OTLP resource. */
  serviceVersion?: string;
}

/** Exports attempt `attempt` of `run` as `format`. */
export async function exportAttempt(
  run: RunIndexEntry,
  attempt: number,
  format: ExportFormat,
  options: ExportAttemptOptions = {},
): Promise<ExportedDocument> {
  const read = await readAttemptExport(run, attempt);
  if (format === 'atif') return { format, text: `${JSON.stringify(atifOf(read), null, 2)}\n`, sent: 0, endpoint: null };
  const { buildOtlpSpans, otlpEndpointOf, otlpJsonOf, sendOtlp } = await import('./otlp.js');
  const spans = await buildOtlpSpans(
    [
      {
        events: read.events,
        context: read.context,
        ...(options.evaluations ? { evaluations: options.evaluations } : {}),
      },
    ],
    options.serviceVersion ? { serviceVersion: options.serviceVersion } : {},
  );
  const endpoint = otlpEndpointOf();
  let sent = 0;
  if (endpoint && options.send !== false) {
    await sendOtlp(spans);
    sent = spans.length;
  }
  return { format, text: `${JSON.stringify(otlpJsonOf(spans), null, 2)}\n`, sent, endpoint };
}

/** The file name an attempt's export gets beside its audit: `<format>.<attempt>.json` (`otlp.2.json`). */
export function exportFileName(format: ExportFormat, attempt: number): string {
  return `${format}.${attempt}.json`;
}

/** Writes `text` to `file` atomically, making its directory. */
export async function writeExport(file: string, text: string): Promise<void> {
  fs.mkdirSync(path.dirname(path.resolve(file)), { recursive: true });
  await writeFileAtomic(path.resolve(file), text);
}
