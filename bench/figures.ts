/**
 * What every benchmark returns besides what it prints: one row per figure, so `bench/run.ts` can write the last
 * run into `bench/RESULTS.md`. A row compares the harness figure with the reference measured in the same run.
 */

/** One measured figure. */
export interface BenchRow {
  /** Which benchmark (`cli-attempt`, `translate`, `fs-snapshot`, …). */
  bench: string;
  /** The case measured (`codex, 1 attempt`, `100 MiB`, `10k files warm`). */
  case: string;
  /** The harness figure, with its unit (`0.41 s`, `180 MiB/s`). */
  harness: string;
  /** The reference figure measured in the same run, with its unit; null when there is none. */
  reference: string | null;
  /** harness / reference (or the figure the target is stated in), e.g. `1.08×`; null when not meaningful. */
  ratio: string | null;
  /** The target for this figure, e.g. `≤ 1.10×`; null when none. */
  target: string | null;
  /** Extra detail (peak RSS, step breakdown, why a target is out of reach). */
  note?: string;
}

/** Median of a non-empty list. */
export function median(values: readonly number[]): number {
  if (values.length === 0) throw new Error('median of nothing');
  const sorted = [...values].sort((a, b) => a - b);
  const mid = (sorted.length - 1) / 2;
  return (sorted[Math.floor(mid)]! + sorted[Math.ceil(mid)]!) / 2;
}
