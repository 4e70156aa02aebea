/**
 * copilot argv, as measured on GitHub Copilot CLI 1.0.102: `copilot -p PROMPT --output-format json
 * --allow-all-tools --no-auto-update` (JSONL events on stdout, exits when the turn is over; `--allow-all-tools` is
 * required in prompt mode) and the same with `--resume=SESSION_ID` to continue a session (the model comes from
 * `COPILOT_MODEL`, set by `prepare`).
 */
import type { ResumeFlag } from '../resume-flags.js';
import type { ResumeArgsRequest, StartArgsRequest } from '../engine.js';

/** The flags of every headless copilot command after the prompt. */
const HEADLESS = ['--output-format', 'json', '--allow-all-tools', '--no-auto-update'] as const;

/** argv for a new session: the passthrough as given, else the default headless command with the prompt. */
export function buildCopilotStartArgs(request: StartArgsRequest): string[] {
  if (request.passthrough.length > 0) return [...request.passthrough];
  return ['-p', request.prompt ?? '', ...HEADLESS];
}

/** argv for continuing session `sessionId` (a UUID, the `result` line's `sessionId`) with `message`. */
export function buildCopilotResumeArgs(request: ResumeArgsRequest): string[] {
  return [`--resume=${request.sessionId}`, '-p', request.message, ...HEADLESS];
}

/** The flag of `copilot` that picks the model (one of its resume flags, so a resume keeps the model). */
export const COPILOT_MODEL_FLAG = '--model';

/** Start flags a `copilot --resume` accepts too (1.0.102 `copilot --help`: they are session-independent). */
export const COPILOT_RESUME_FLAGS: readonly ResumeFlag[] = [
  { names: ['--model'], value: true },
  { names: ['--agent'], value: true },
  { names: ['--reasoning-effort'], value: true },
  { names: ['--output-format'], value: true },
  { names: ['--log-level'], value: true },
  { names: ['--stream'], value: true },
  { names: ['--add-dir'], value: true },
  { names: ['--available-tools'], value: true },
  { names: ['--excluded-tools'], value: true },
  { names: ['--allow-tool'], value: true },
  { names: ['--deny-tool'], value: true },
  { names: ['--additional-mcp-config'], value: true },
  { names: ['--disable-mcp-server'], value: true },
  { names: ['--allow-all-tools'], value: false },
  { names: ['--allow-all-paths'], value: false },
  { names: ['--allow-all-urls'], value: false },
  { names: ['--allow-all', '--yolo'], value: false },
  { names: ['--disable-builtin-mcps'], value: false },
  { names: ['--no-custom-instructions'], value: false },
  { names: ['--no-auto-update'], value: false },
  { names: ['--no-ask-user'], value: false },
  { names: ['-s', '--silent'], value: false },
];
