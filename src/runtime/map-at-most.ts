/**
 * A bounded pool: `map` over a list with at most so many calls running at once, the results in the list's order.
 * For work that is mostly waiting (engine attempts, trials, `--version` probes, a fluent `parallel`, large files
 * hashed), where starting all at once would crowd the machine.
 */

/**
 * `map` over `items`, at most `width` (≥ 1) at a time; the results in the items' order. After a call throws, no new
 * one starts, and the first error is thrown once the running ones have settled.
 */
export async function mapAtMost<T, R>(
  items: readonly T[],
  width: number,
  map: (item: T, index: number) => Promise<R>,
): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let next = 0;
  let failure: { error: unknown } | null = null;
  const lane = async (): Promise<void> => {
    while (next < items.length && !failure) {
      const index = next++;
      try {
        results[index] = await map(items[index]!, index);
      } catch (error) {
        failure ??= { error };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(width, items.length)) }, lane));
  if (failure) throw (failure as { error: unknown }).error;
  return results;
}
