/**
 * Qwen Code argv, as measured on @qwen-code/qwen-code 0.24.4 (`qwen --help`): `qwen -p PROMPT --yolo
 * --output-format stream-json` (claude-like NDJSON on stdout; `--yolo` approves every tool call) and
 * `qwen --resume SESSION_ID -p MESSAGE …` for the next turn, where SESSION_ID is the UUID of the `system/init`
 * event's `session_id`. Sessions are stored per project directory (`~/.qwen/projects/<cwd slug>/chats/<id>.jsonl`),
 * so a resume must run in the same working directory, which the harness guarantees by resuming in the run dir.
 * `-p` is marked deprecated in favour of a positional prompt, but a positional prompt starting with `-` would be
 * read as a flag, so `-p` is kept.
 */
import type { ResumeFlag } from '../resume-flags.js';
import type { ResumeArgsRequest, StartArgsRequest } from '../engine.js';

/** Flags shared by start and resume: machine-readable events and no approval prompts. */
export const QWEN_HEADLESS_FLAGS: readonly string[] = ['--yolo', '--output-format', 'stream-json'];

/** argv for a new session: the passthrough as given, else the default headless command with the prompt. */
export function buildQwenStartArgs(request: StartArgsRequest): string[] {
  if (request.passthrough.length > 0) return [...request.passthrough];
  return ['-p', request.prompt ?? '', ...QWEN_HEADLESS_FLAGS];
}

/** argv for resuming session `sessionId` (a UUID) with `message`. */
export function buildQwenResumeArgs(request: ResumeArgsRequest): string[] {
  return ['--resume', request.sessionId, '-p', request.message, ...QWEN_HEADLESS_FLAGS];
}

/** The flag of `qwen` that picks the model (one of its resume flags, so a resume keeps the model). */
export const QWEN_MODEL_FLAG = '-m';

/** Start flags that still apply with `--resume` (0.24.4 `qwen --help`). */
export const QWEN_RESUME_FLAGS: readonly ResumeFlag[] = [
  { names: ['-m', '--model'], value: true },
  { names: ['-o', '--output-format'], value: true },
  { names: ['--input-format'], value: true },
  { names: ['-y', '--yolo'], value: false },
  { names: ['--approval-mode'], value: true },
  { names: ['-s', '--sandbox'], value: false },
  { names: ['--include-directories', '--add-dir'], value: true },
  { names: ['--allowed-mcp-server-names'], value: true },
  { names: ['--mcp-config'], value: true },
  { names: ['--allowed-tools'], value: true },
  { names: ['--core-tools'], value: true },
  { names: ['--exclude-tools'], value: true },
  { names: ['--system-prompt'], value: true },
  { names: ['--append-system-prompt'], value: true },
  { names: ['--max-session-turns'], value: true },
  { names: ['--include-partial-messages'], value: false },
  { names: ['-e', '--extensions'], value: true },
  { names: ['-d', '--debug'], value: false },
  { names: ['--auth-type'], value: true },
];
