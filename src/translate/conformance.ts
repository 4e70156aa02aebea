/**
 * Builds the conformance report of an attempt from its RASP and FCMP events.
 */
import type { Completion, ConformanceReport, Diagnostic, EngineId, FcmpEvent, RaspEvent, Usage } from '../protocol/index.js';
import { CONFORMANCE_VERSION } from '../protocol/versions.js';

/** Inputs of {@link buildConformanceReport}. */
export interface ConformanceInput {
  runId: string;
  engine: EngineId;
  attempt: number;
  launch: ConformanceReport['launch'];
  rasp: readonly RaspEvent[];
  fcmp: readonly FcmpEvent[];
  completion: Completion;
  durationMs: number | null;
  /** Version of the engine CLI, when known. */
  engineVersion?: string | null;
}

/** Every diagnostic of the attempt, from RASP (parser and harness) in order. */
export function collectDiagnostics(rasp: readonly RaspEvent[]): Diagnostic[] {
  return rasp.flatMap(({ data }) => (data.type === 'diagnostic' ? [data.diagnostic] : []));
}

/** Number of distinct tool calls. */
export function countToolCalls(rasp: readonly RaspEvent[]): number {
  return new Set(rasp.flatMap(({ data }) => (data.type === 'engine.tool.call' ? [data.call_id] : []))).size;
}

/** The conformance report. */
export function buildConformanceReport(input: ConformanceInput): ConformanceReport {
  const counts: Partial<Record<FcmpEvent['type'], number>> = {};
  for (const event of input.fcmp) counts[event.type] = (counts[event.type] ?? 0) + 1;
  const streams = [...new Set(input.rasp.flatMap(({ data, raw_ref }) => (data.type === 'raw.line' && raw_ref ? [raw_ref.stream] : [])))].sort();
  let usage: Usage | null = null;
  for (const { data } of input.rasp) if (data.type === 'engine.usage') usage = data.usage;
  return {
    version: CONFORMANCE_VERSION,
    run_id: input.runId,
    engine: input.engine,
    attempt: input.attempt,
    launch: input.launch,
    parser_profile: { parser: `${input.engine}/default`, streams },
    fcmp_counts: counts,
    assistant_message_count: counts['assistant.message.final'] ?? 0,
    tool_call_count: countToolCalls(input.rasp),
    diagnostics: collectDiagnostics(input.rasp),
    completion: input.completion,
    metrics: { duration_ms: input.durationMs, usage },
    ...(input.engineVersion !== undefined ? { engine_version: input.engineVersion } : {}),
  };
}
