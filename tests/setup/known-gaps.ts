/**
 * What the two engines added for issue 46 (copilot, qwen; the issue is still open) do not pass yet: each such engine
 * test skips for that engine and says why, so the gap is listed in every report (a skipped test with its reason)
 * instead of failing CI or being hidden. docs/engines.md names each under its engine; a row leaves when its engine
 * passes. The engine is read from the test's name (`describe.for(engines)('%s …')` puts it there).
 */
import path from 'node:path';
import { beforeEach } from 'vitest';

/** Per engine: [test file, start of the test's title or `*` for all of that file's tests on the engine, why]. */
const KNOWN_GAPS: Readonly<Record<string, ReadonlyArray<readonly [string, string, string]>>> = {
  copilot: [['mcp.engine.test.ts', 'a stdio MCP server not ready', 'copilot has no per-server MCP startup timeout']],
  qwen: [],
};

/** Why `engine` skips test `title` of `file` (issue 46), or null. */
export function knownGap(engine: string, file: string, title: string): string | null {
  const row = KNOWN_GAPS[engine]?.find(
    ([f, start]) => f === path.basename(file) && (start === '*' || title.startsWith(start)),
  );
  return row ? `known gap of ${engine} (issue 46): ${row[2]}` : null;
}

beforeEach(({ task, skip }) => {
  const names: string[] = [];
  for (let suite = task.suite; suite; suite = suite.suite) names.push(suite.name);
  const engine = Object.keys(KNOWN_GAPS).find((id) => names.some((name) => new RegExp(`\\b${id}\\b`).test(name)));
  const reason = engine ? knownGap(engine, task.file.filepath, task.name) : null;
  if (reason) skip(reason);
});
