/**
 * Run-directory paths an engine cannot work under, shared by the engines that URI-decode their working directory:
 * gemini 0.61 (its tools decode every path, so `%41` reads as `A` and a write lands outside the run directory) and
 * opencode 1.18 (its server decodes the directory and fails the turn: "Unexpected server error").
 */

/** Why an engine that URI-decodes paths cannot work under `dir` (`%` and two hex digits), or null. */
export function percentEncodedPathProblem(dir: string): string | null {
  return /%[0-9A-Fa-f]{2}/.test(dir)
    ? 'it contains "%" and two hex digits, which the engine URI-decodes into another directory (its tools would miss or escape the run directory)'
    : null;
}
