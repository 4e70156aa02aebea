/**
 * opencode argv, as measured on 1.18.33: `opencode run --format json -m agent-harness/scripted PROMPT` (NDJSON
 * events on stdout, exits when the session goes idle) and `opencode run --format json --session SES_ID MESSAGE`
 * to continue a session (the model comes from the session and the config's `model` key).
 */
import type { ResumeFlag } from '../resume-flags.js';
import type { ResumeArgsRequest, StartArgsRequest } from '../engine.js';
import { OPENCODE_PROVIDER_ID, OPENCODE_SCRIPTED_MODEL } from './config.js';

/** argv for a new session: the passthrough as given, else the default headless command with the prompt. */
export function buildOpencodeStartArgs(request: StartArgsRequest): string[] {
  if (request.passthrough.length > 0) return [...request.passthrough];
  return ['run', '--format', 'json', '-m', `${OPENCODE_PROVIDER_ID}/${OPENCODE_SCRIPTED_MODEL}`, request.prompt ?? ''];
}

/** argv for continuing session `sessionId` (`ses_…`) with `message`. */
export function buildOpencodeResumeArgs(request: ResumeArgsRequest): string[] {
  return ['run', '--format', 'json', '--session', request.sessionId, request.message];
}

/** The flag of `opencode` that picks the model (one of its resume flags, so a resume keeps the model). */
export const OPENCODE_MODEL_FLAG = '-m';

/** Start flags `opencode run --session` accepts too (1.18.33 `opencode run --help`). */
export const OPENCODE_RESUME_FLAGS: readonly ResumeFlag[] = [
  { names: ['-m', '--model'], value: true },
  { names: ['--agent'], value: true },
  { names: ['--format'], value: true },
  { names: ['--variant'], value: true },
  { names: ['--thinking'], value: false },
  { names: ['--print-logs'], value: false },
  { names: ['--log-level'], value: true },
  { names: ['--pure'], value: false },
  { names: ['--auto'], value: false },
];
