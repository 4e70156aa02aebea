/**
 * gemini-cli argv, as measured on 0.61.0: `gemini -p PROMPT --output-format stream-json --yolo` (JSONL events
 * on stdout; `--yolo` approves every tool call, honoured only in a trusted folder) and
 * `gemini --resume SESSION_ID -p MESSAGE --output-format stream-json --yolo`, where SESSION_ID is the UUID of
 * the `init` event's `session_id` (also `session_id` of the `json` document). Sessions are stored per project
 * (`~/.gemini/tmp/<project>/chats`), so a resume must run in the same working directory.
 */
import type { ResumeFlag } from '../resume-flags.js';
import type { ResumeArgsRequest, StartArgsRequest } from '../engine.js';

/** Flags shared by start and resume. */
const HEADLESS_FLAGS = ['--output-format', 'stream-json', '--yolo'] as const;

/** argv for a new session: the passthrough as given, else the default headless command with the prompt. */
export function buildGeminiStartArgs(request: StartArgsRequest): string[] {
  if (request.passthrough.length > 0) return [...request.passthrough];
  return ['-p', request.prompt ?? '', ...HEADLESS_FLAGS];
}

/** argv for resuming session `sessionId` with `message`. */
export function buildGeminiResumeArgs(request: ResumeArgsRequest): string[] {
  return ['--resume', request.sessionId, '-p', request.message, ...HEADLESS_FLAGS];
}

/** The flag of `gemini` that picks the model (one of its resume flags, so a resume keeps the model). */
export const GEMINI_MODEL_FLAG = '-m';

/** Start flags that still apply with `--resume` (0.61.0 `gemini --help`). */
export const GEMINI_RESUME_FLAGS: readonly ResumeFlag[] = [
  { names: ['-m', '--model'], value: true },
  { names: ['-o', '--output-format'], value: true },
  { names: ['-y', '--yolo'], value: false },
  { names: ['--approval-mode'], value: true },
  { names: ['-s', '--sandbox'], value: false },
  { names: ['--include-directories'], value: true },
  { names: ['--allowed-mcp-server-names'], value: true },
  { names: ['-e', '--extensions'], value: true },
  { names: ['-d', '--debug'], value: false },
  { names: ['--raw-output'], value: false },
  { names: ['--accept-raw-output-risk'], value: false },
  { names: ['--skip-trust'], value: false },
  { names: ['--policy'], value: true },
];
