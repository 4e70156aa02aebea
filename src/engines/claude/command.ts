/**
 * claude argv, as measured on @anthropic-ai/claude-code 2.1.197: `claude -p PROMPT --output-format stream-json
 * --verbose --dangerously-skip-permissions` (NDJSON on stdout; `stream-json` needs `--verbose` with `-p`) and
 * `claude -p --resume SESSION_ID MESSAGE …` for the next turn. Resume only finds the session from the same
 * cwd (sessions are stored per project directory), which the harness guarantees by resuming in the run dir.
 * As root the bypass flag needs `IS_SANDBOX=1` (set by the adapter).
 */
import type { ResumeFlag } from '../resume-flags.js';
import type { ResumeArgsRequest, StartArgsRequest } from '../engine.js';

/** Flags shared by start and resume: machine-readable events and no permission prompts. */
export const CLAUDE_HEADLESS_FLAGS: readonly string[] = [
  '--output-format',
  'stream-json',
  '--verbose',
  '--dangerously-skip-permissions',
];

/** argv for a new session: the passthrough as given, else the default headless command with the prompt. */
export function buildClaudeStartArgs(request: StartArgsRequest): string[] {
  if (request.passthrough.length > 0) return [...request.passthrough];
  return ['-p', request.prompt ?? '', ...CLAUDE_HEADLESS_FLAGS];
}

/** argv for resuming session `sessionId` (a UUID) with `message`. */
export function buildClaudeResumeArgs(request: ResumeArgsRequest): string[] {
  return ['-p', '--resume', request.sessionId, request.message, ...CLAUDE_HEADLESS_FLAGS];
}

/** The flag of `claude` that picks the model (one of its resume flags, so a resume keeps the model). */
export const CLAUDE_MODEL_FLAG = '--model';

/** Start flags that still apply with `--resume` (2.1.197 `claude --help`). */
export const CLAUDE_RESUME_FLAGS: readonly ResumeFlag[] = [
  { names: ['--model'], value: true },
  { names: ['--output-format'], value: true },
  { names: ['--input-format'], value: true },
  { names: ['--verbose'], value: false },
  { names: ['--dangerously-skip-permissions'], value: false },
  { names: ['--permission-mode'], value: true },
  { names: ['--allowedTools', '--allowed-tools'], value: true },
  { names: ['--disallowedTools', '--disallowed-tools'], value: true },
  { names: ['--append-system-prompt'], value: true },
  { names: ['--system-prompt'], value: true },
  { names: ['--mcp-config'], value: true },
  { names: ['--add-dir'], value: true },
  { names: ['--max-turns'], value: true },
  { names: ['--fallback-model'], value: true },
  { names: ['--settings'], value: true },
  { names: ['--include-partial-messages'], value: false },
  { names: ['--strict-mcp-config'], value: false },
];
