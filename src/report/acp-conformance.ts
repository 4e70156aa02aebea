/**
 * ACP against native, per engine (issue 34, part 2): the same scripted conversation run over `transport: 'acp'` and
 * `native`, compared on what a caller sees — the AgentEvent types in order, the tool calls (kind and name), the final
 * message and the run directory's fs diff — plus the ACP-only checks (permission allowed and rejected, cancel,
 * resume). The rows are plain data; {@link acpConformanceMarkdown} renders them as a table for the consistency report.
 */
import * as z from 'zod';
import type { AgentEvent, FsDiff, RaspEvent } from '../protocol/index.js';

/** One transport's side of a comparison: what the query yielded and what its attempt recorded. */
export interface TransportRun {
  events: readonly AgentEvent[];
  rasp: readonly RaspEvent[];
  fsDiff: FsDiff | null;
}

/** The outcome of one check: passed, failed (with why), or not run (with why). */
export const CheckOutcomeSchema = z.discriminatedUnion('status', [
  z.object({ status: z.literal('pass') }),
  z.object({ status: z.literal('fail'), detail: z.string() }),
  z.object({ status: z.literal('skipped'), detail: z.string() }),
]);
/** The outcome of one check. */
export type CheckOutcome = z.infer<typeof CheckOutcomeSchema>;

/** One engine's row of the consistency report's ACP table. */
export const AcpConformanceRowSchema = z.object({
  engine: z.string(),
  eventTypes: CheckOutcomeSchema,
  toolCalls: CheckOutcomeSchema,
  finalMessage: CheckOutcomeSchema,
  fsDiff: CheckOutcomeSchema,
  permissionAllow: CheckOutcomeSchema,
  permissionReject: CheckOutcomeSchema,
  cancel: CheckOutcomeSchema,
  resume: CheckOutcomeSchema,
});
/** One engine's row. */
export type AcpConformanceRow = z.infer<typeof AcpConformanceRowSchema>;

/** One check of a row. */
export type AcpCheck = Exclude<keyof AcpConformanceRow, 'engine'>;

/**
 * The Vitest task meta key under which a test reports its ACP checks (`task.meta[ACP_META_KEY] = { engine, checks }`);
 * the reporter collects them into the report's `acpConformance` table.
 */
export const ACP_META_KEY = 'agentHarnessAcp';

/** What one test reports: some checks of one engine. */
export const AcpConformanceEntrySchema = z.object({
  engine: z.string(),
  checks: AcpConformanceRowSchema.omit({ engine: true }).partial(),
});
/** What one test reports. */
export type AcpConformanceEntry = z.infer<typeof AcpConformanceEntrySchema>;

/** The entry a test's meta carries, or null (absent or malformed). */
export function readAcpConformanceMeta(meta: unknown): AcpConformanceEntry | null {
  const value = (meta as Record<string, unknown> | null | undefined)?.[ACP_META_KEY];
  const parsed = AcpConformanceEntrySchema.safeParse(value);
  return parsed.success ? parsed.data : null;
}

/** The table of the tests' entries: one row per engine (sorted); a check no test reported is `skipped`. */
export function buildAcpConformanceTable(
  entries: ReadonlyArray<AcpConformanceEntry | null | undefined>,
): AcpConformanceRow[] {
  const rows = new Map<string, Partial<Record<AcpCheck, CheckOutcome>>>();
  for (const entry of entries) {
    if (!entry) continue;
    const row = rows.get(entry.engine) ?? {};
    for (const [check] of ACP_CONFORMANCE_COLUMNS) {
      const outcome = entry.checks[check];
      // A failure stays: a later passing test does not hide it.
      if (outcome && row[check]?.status !== 'fail') row[check] = outcome;
    }
    rows.set(entry.engine, row);
  }
  return [...rows.entries()]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([engine, row]) => {
      const full: AcpConformanceRow = { engine } as AcpConformanceRow;
      for (const [check] of ACP_CONFORMANCE_COLUMNS)
        full[check] = row[check] ?? { status: 'skipped', detail: 'no test reported it' };
      return full;
    });
}

/** The AgentEvent types in order, a message by its content kind (`message:tool_use`). */
function eventTypeSequence(events: readonly AgentEvent[]): string[] {
  return events.map((e) => (e.type === 'message' && e.content ? `message:${e.content.kind}` : e.type));
}

/** The tool calls of a RASP stream, by normalized kind and name. */
function toolCallSignature(rasp: readonly RaspEvent[]): string[] {
  return rasp.flatMap((e) => (e.data.type === 'engine.tool.call' ? [`${e.data.kind}:${e.data.name}`] : []));
}

/** The last whole assistant message of a RASP stream, or null. */
function finalMessage(rasp: readonly RaspEvent[]): string | null {
  let last: string | null = null;
  for (const e of rasp) if (e.data.type === 'engine.assistant.message' && e.data.final) last = e.data.text;
  return last;
}

/** The agent's changes of an fs diff, one list (bookkeeping apart). */
function fsChanges(diff: FsDiff | null): string[] {
  if (!diff) return [];
  return [
    ...diff.created.map((p) => `+${p}`),
    ...diff.modified.map((p) => `~${p}`),
    ...diff.deleted.map((p) => `-${p}`),
  ].sort();
}

function same<T>(what: string, native: T, acp: T): CheckOutcome {
  return JSON.stringify(native) === JSON.stringify(acp)
    ? { status: 'pass' }
    : { status: 'fail', detail: `${what}: native ${JSON.stringify(native)}, acp ${JSON.stringify(acp)}` };
}

/** The four comparison checks of one engine's native and ACP runs of the same conversation. */
export function compareTransports(
  native: TransportRun,
  acp: TransportRun,
): Pick<AcpConformanceRow, 'eventTypes' | 'toolCalls' | 'finalMessage' | 'fsDiff'> {
  return {
    eventTypes: same('AgentEvent types', eventTypeSequence(native.events), eventTypeSequence(acp.events)),
    // Names differ between an engine's stream and its ACP titles (gemini's `write_file` is named by its call id);
    // the kinds are what must agree.
    toolCalls: same(
      'tool calls (kind)',
      toolCallSignature(native.rasp).map((s) => s.split(':')[0]),
      toolCallSignature(acp.rasp).map((s) => s.split(':')[0]),
    ),
    finalMessage: same('final message', finalMessage(native.rasp), finalMessage(acp.rasp)),
    fsDiff: same('fs diff', fsChanges(native.fsDiff), fsChanges(acp.fsDiff)),
  };
}

/** The checks of a row, in table order, with their column titles (the Markdown table and the HTML report's). */
export const ACP_CONFORMANCE_COLUMNS: ReadonlyArray<[AcpCheck, string]> = [
  ['eventTypes', 'events'],
  ['toolCalls', 'tool calls'],
  ['finalMessage', 'final message'],
  ['fsDiff', 'fs diff'],
  ['permissionAllow', 'permission allow'],
  ['permissionReject', 'permission reject'],
  ['cancel', 'cancel'],
  ['resume', 'resume'],
];

/** The rows as a Markdown table (✓ pass, ✗ fail, – not run), with the failures' details under it. */
export function acpConformanceMarkdown(rows: readonly AcpConformanceRow[]): string {
  const mark = (o: CheckOutcome): string => (o.status === 'pass' ? '✓' : o.status === 'fail' ? '✗' : '–');
  const lines = [
    `| engine | ${ACP_CONFORMANCE_COLUMNS.map(([, title]) => title).join(' | ')} |`,
    `| --- | ${ACP_CONFORMANCE_COLUMNS.map(() => '---').join(' | ')} |`,
    ...rows.map((row) => `| ${row.engine} | ${ACP_CONFORMANCE_COLUMNS.map(([key]) => mark(row[key])).join(' | ')} |`),
  ];
  const notes = rows.flatMap((row) =>
    ACP_CONFORMANCE_COLUMNS.flatMap(([key, title]) => {
      const o = row[key];
      return o.status === 'pass' ? [] : [`- ${row.engine}, ${title}: ${o.detail}`];
    }),
  );
  return [...lines, ...(notes.length > 0 ? ['', ...notes] : [])].join('\n');
}
