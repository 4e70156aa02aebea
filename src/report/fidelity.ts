/**
 * Cassette fidelity per engine: over the attempts that replayed or recorded a cassette, how many of the engine's
 * requests were served exactly, served divergent, missed, and how many recorded interactions went unused. The
 * consistency report carries it (`fidelity`) and shows it as a table.
 */
import * as z from 'zod';
import type { AgentHarnessTaskMeta } from './attempt-record.js';

/** One engine's row of the fidelity table. */
export const FidelityRowSchema = z.object({
  engine: z.string(),
  /** Attempts that recorded a cassette. */
  recorded: z.number().int().nonnegative(),
  /** Attempts that replayed one. */
  replayed: z.number().int().nonnegative(),
  exact: z.number().int().nonnegative(),
  divergent: z.number().int().nonnegative(),
  missed: z.number().int().nonnegative(),
  unused: z.number().int().nonnegative(),
});
/** One row of the fidelity table. */
export type FidelityRow = z.infer<typeof FidelityRowSchema>;

/** The fidelity table of the tests' attempts, one row per engine (sorted); empty when no attempt used a cassette. */
export function buildFidelityTable(metas: ReadonlyArray<AgentHarnessTaskMeta | undefined>): FidelityRow[] {
  const rows = new Map<string, FidelityRow>();
  for (const meta of metas) {
    if (!meta) continue;
    for (const attempt of meta.attempts) {
      const cassette = attempt.cassette;
      if (!cassette) continue;
      const row = rows.get(meta.engine) ?? {
        engine: meta.engine,
        recorded: 0,
        replayed: 0,
        exact: 0,
        divergent: 0,
        missed: 0,
        unused: 0,
      };
      if (cassette.mode === 'record') row.recorded += 1;
      else row.replayed += 1;
      row.exact += cassette.exact;
      row.divergent += cassette.divergent;
      row.missed += cassette.missed;
      row.unused += cassette.unused;
      rows.set(meta.engine, row);
    }
  }
  return [...rows.values()].sort((a, b) => (a.engine < b.engine ? -1 : a.engine > b.engine ? 1 : 0));
}

/** The fidelity table as Markdown lines (empty when there is none). */
export function renderFidelityTable(rows: readonly FidelityRow[]): string[] {
  if (rows.length === 0) return [];
  return [
    '| engine | recorded | replayed | exact | divergent | missed | unused |',
    '| --- | --- | --- | --- | --- | --- | --- |',
    ...rows.map(
      (r) =>
        `| ${r.engine} | ${r.recorded} | ${r.replayed} | ${r.exact} | ${r.divergent} | ${r.missed} | ${r.unused} |`,
    ),
  ];
}
