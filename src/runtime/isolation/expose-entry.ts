/**
 * The string form of an exposed host path, `PATH`, `PATH:ro` or `PATH:rw` (`--expose` on the CLI, `expose` in the
 * plugin and providers), read in one place. A module of its own: the CLI's option parsing loads it at every start.
 */

/** A `PATH[:ro|:rw]` string split into its path (as given: relative, or empty) and its access. */
export function parseExposeEntry(entry: string): { path: string; readOnly: boolean } {
  const readOnly = entry.endsWith(':ro');
  return { path: readOnly || entry.endsWith(':rw') ? entry.slice(0, -3) : entry, readOnly };
}
