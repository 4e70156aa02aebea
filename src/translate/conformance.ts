/**
 * The conformance report of an attempt, counted from its RASP and FCMP events as they go by.
 */
import type {
  Completion,
  ConformanceReport,
  Diagnostic,
  EngineId,
  FcmpEvent,
  RaspEvent,
  Usage,
} from '../protocol/index.js';
import { CONFORMANCE_VERSION } from '../protocol/versions.js';

/** What a conformance report says besides the counts of its events. */
export interface ConformanceInput {
  runId: string;
  engine: EngineId;
  attempt: number;
  launch: ConformanceReport['launch'];
  completion: Completion;
  durationMs: number | null;
  /** Version of the engine CLI, when known. */
  engineVersion?: string | null;
  /** Whether that version is one the adapter was checked against (null when unknown). */
  engineVersionChecked?: boolean | null;
}

/** Every diagnostic of the attempt, from RASP (parser and harness) in order. */
export function collectDiagnostics(rasp: readonly RaspEvent[]): Diagnostic[] {
  return rasp.flatMap(({ data }) => (data.type === 'diagnostic' ? [data.diagnostic] : []));
}

/** Number of distinct tool calls. */
export function countToolCalls(rasp: readonly RaspEvent[]): number {
  return new Set(rasp.flatMap(({ data }) => (data.type === 'engine.tool.call' ? [data.call_id] : []))).size;
}

/** Counts what a conformance report needs while an attempt's events go by, keeping no events. */
export interface ConformanceTally {
  rasp(event: RaspEvent): void;
  fcmp(event: FcmpEvent): void;
  /** The report of the events counted so far. */
  report(input: ConformanceInput): ConformanceReport;
}

/** Creates a {@link ConformanceTally}: counters, the streams seen, the tool call ids and the diagnostics. */
export function createConformanceTally(): ConformanceTally {
  const counts: Partial<Record<FcmpEvent['type'], number>> = {};
  const streams = new Set<string>();
  const toolCalls = new Set<string>();
  const diagnostics: Diagnostic[] = [];
  let usage: Usage | null = null;
  return {
    rasp({ data, raw_ref }) {
      if (data.type === 'raw.line') {
        if (raw_ref) streams.add(raw_ref.stream);
      } else if (data.type === 'engine.usage') usage = data.usage;
      else if (data.type === 'engine.tool.call') toolCalls.add(data.call_id);
      else if (data.type === 'diagnostic') diagnostics.push(data.diagnostic);
    },
    fcmp(event) {
      counts[event.type] = (counts[event.type] ?? 0) + 1;
    },
    report(input) {
      return {
        version: CONFORMANCE_VERSION,
        run_id: input.runId,
        engine: input.engine,
        attempt: input.attempt,
        launch: input.launch,
        parser_profile: { parser: `${input.engine}/default`, streams: [...streams].sort() },
        fcmp_counts: { ...counts },
        assistant_message_count: counts['assistant.message.final'] ?? 0,
        tool_call_count: toolCalls.size,
        diagnostics: [...diagnostics],
        completion: input.completion,
        metrics: { duration_ms: input.durationMs, usage },
        ...(input.engineVersion !== undefined ? { engine_version: input.engineVersion } : {}),
        ...(input.engineVersionChecked !== undefined ? { engine_version_checked: input.engineVersionChecked } : {}),
      };
    },
  };
}
