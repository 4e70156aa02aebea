/**
 * The directory paths gemini 0.61 cannot work in. Its tools check every path they touch, the working directory
 * included (packages/core/src/utils/path-validator.ts and paths.ts of @google/gemini-cli 0.61):
 *
 * - a path holding `"` or `...` (and longer than 20 characters: every run directory is) is refused as "suspicious";
 * - a newline, carriage return, tab or NUL is refused;
 * - a path component starting with a test-log marker (`AssertionError:`, `FAIL `, `✓ `, `× `,
 *   `TestingLibraryElementError:`) is refused as a "misinterpreted log fragment";
 * - `%` and two hex digits are URI-decoded before the workspace check, so `%41` reads as `A`: the file is written
 *   at the decoded path, outside the run directory.
 *
 * Each ends in "Path not in workspace" or a write elsewhere, so such a run directory is refused before the run.
 * Spaces, single quotes and non-ASCII letters are fine.
 */

import { percentEncodedPathProblem } from '../workspace-path.js';

const LOG_MARKER = /(^|\/)(AssertionError:|FAIL |✓ |× |TestingLibraryElementError:)/;

/** Why gemini 0.61's tools cannot work under `dir` (an absolute path), or null when they can. */
export function geminiWorkspacePathProblem(dir: string): string | null {
  if (dir.includes('"')) return 'it contains a double quote, which gemini refuses in any path of its tools';
  if (dir.includes('...')) return 'it contains "...", which gemini refuses in any path of its tools';
  if (/[\n\r\t\0]/.test(dir)) return 'it contains a control character, which gemini refuses in any path';
  if (LOG_MARKER.test(dir))
    return 'a component starts like a test-log line ("FAIL ", "✓ ", …), which gemini refuses as a log fragment';
  return percentEncodedPathProblem(dir);
}

/** gemini 0.61's own words when it refused a tool's path for its shape (its path validator's messages). */
export const GEMINI_PATH_REFUSED =
  /Path contains suspicious characters|Path appears to be a misinterpreted log fragment|Path contains invalid characters/;
