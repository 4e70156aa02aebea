/** Renders the RecordKeeper's per-phase statistics as a plain-text table. */
import type { ConversationStatistics } from 'agent-harness/orchestrator';

const COLUMNS = ['phase', 'runs', 'calls', 'tokens in', 'tokens out', 'latency ms', 'errors'] as const;

/** The statistics table, one row per phase in run order, then the turn counts. */
export function formatStatistics(stats: ConversationStatistics): string {
  const rows = Object.entries(stats.phases).map(([phase, s]) =>
    [phase, s.runs, s.calls, s.inputTokens, s.outputTokens, s.latencyMs, s.errors].map(String),
  );
  const widths = COLUMNS.map((c, i) => Math.max(c.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: readonly string[]): string =>
    cells.map((cell, i) => (i === 0 ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!))).join('  ');
  return [
    line(COLUMNS),
    widths.map((w) => '-'.repeat(w)).join('  '),
    ...rows.map(line),
    '',
    `turns: ${stats.turns.user} user, ${stats.turns.assistant} assistant`,
  ].join('\n');
}
