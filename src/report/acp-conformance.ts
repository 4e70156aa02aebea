/**
 * ACP against native, per engine (issue 34, part 2): the same scripted conversation run over `transport: 'acp'` and
 * `native`, compared on what a caller sees — the AgentEvent types in order, the tool calls (kind and name), the final
 * message and the run directory's fs diff — plus the ACP-only checks (permission allowed and rejected, cancel,
 * resume). The rows are plain data; {@link acpConformanceMarkdown} renders them as a table for the consistency report.
 */
import type { AgentEvent, FsDiff, RaspEvent } from '../protocol/index.js';

/** One transport's side of a comparison: what the query yielded and what its attempt recorded. */
export interface TransportRun {
  events: readonly AgentEvent[];
  rasp: readonly RaspEvent[];
  fsDiff: FsDiff | null;
}

/** The outcome of one check: passed, failed (with why), or not run (with why). */
export type CheckOutcome =
  | { status: 'pass' }
  | { status: 'fail'; detail: string }
  | { status: 'skipped'; detail: string };

/** One engine's row. */
export interface AcpConformanceRow {
  engine: string;
  eventTypes: CheckOutcome;
  toolCalls: CheckOutcome;
  finalMessage: CheckOutcome;
  fsDiff: CheckOutcome;
  permissionAllow: CheckOutcome;
  permissionReject: CheckOutcome;
  cancel: CheckOutcome;
  resume: CheckOutcome;
}

/** The AgentEvent types in order, a message by its content kind (`message:tool_use`). */
export function eventTypeSequence(events: readonly AgentEvent[]): string[] {
  return events.map((e) => (e.type === 'message' && e.content ? `message:${e.content.kind}` : e.type));
}

/** The tool calls of a RASP stream, by normalized kind and name. */
export function toolCallSignature(rasp: readonly RaspEvent[]): string[] {
  return rasp.flatMap((e) => (e.data.type === 'engine.tool.call' ? [`${e.data.kind}:${e.data.name}`] : []));
}

/** The last whole assistant message of a RASP stream, or null. */
export function finalMessage(rasp: readonly RaspEvent[]): string | null {
  let last: string | null = null;
  for (const e of rasp) if (e.data.type === 'engine.assistant.message' && e.data.final) last = e.data.text;
  return last;
}

/** The agent's changes of an fs diff, one list (bookkeeping apart). */
export function fsChanges(diff: FsDiff | null): string[] {
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

const COLUMNS: ReadonlyArray<[keyof Omit<AcpConformanceRow, 'engine'>, string]> = [
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
    `| engine | ${COLUMNS.map(([, title]) => title).join(' | ')} |`,
    `| --- | ${COLUMNS.map(() => '---').join(' | ')} |`,
    ...rows.map((row) => `| ${row.engine} | ${COLUMNS.map(([key]) => mark(row[key])).join(' | ')} |`),
  ];
  const notes = rows.flatMap((row) =>
    COLUMNS.flatMap(([key, title]) => {
      const o = row[key];
      return o.status === 'pass' ? [] : [`- ${row.engine}, ${title}: ${o.detail}`];
    }),
  );
  return [...lines, ...(notes.length > 0 ? ['', ...notes] : [])].join('\n');
}
