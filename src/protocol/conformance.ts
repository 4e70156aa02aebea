/**
 * `.audit/conformance-report.N.json`: what CI compares across engines and releases for one attempt.
 */
import * as z from 'zod';
import { CompletionSchema } from './meta.js';
import { DiagnosticSchema, EngineIdSchema, UsageSchema } from './common.js';
import { FcmpTypeSchema } from './fcmp.js';

import { CONFORMANCE_VERSION } from './versions.js';

/** Version tag of the conformance report (defined in `versions.ts`). */
export { CONFORMANCE_VERSION };

/** One attempt's conformance report. */
export const ConformanceReportSchema = z.object({
  version: z.literal(CONFORMANCE_VERSION),
  run_id: z.string(),
  engine: EngineIdSchema,
  attempt: z.number().int().positive(),
  launch: z.enum(['start', 'resume', 'passthrough', 'translate']),
  /** Which parser read the output, and from which streams. */
  parser_profile: z.object({ parser: z.string(), streams: z.array(z.string()) }),
  fcmp_counts: z.partialRecord(FcmpTypeSchema, z.number().int().nonnegative()),
  assistant_message_count: z.number().int().nonnegative(),
  tool_call_count: z.number().int().nonnegative(),
  diagnostics: z.array(DiagnosticSchema),
  completion: CompletionSchema,
  metrics: z.object({ duration_ms: z.number().nonnegative().nullable(), usage: UsageSchema.nullable() }),
  /** Version of the engine CLI that produced the output (null when unknown, e.g. a translated recording). */
  engine_version: z.string().nullable().optional(),
  /** false: the engine's adapter was not checked against that version (meta `engine_version_checked`). */
  engine_version_checked: z.boolean().nullable().optional(),
});
/** One attempt's conformance report. */
export type ConformanceReport = z.infer<typeof ConformanceReportSchema>;
