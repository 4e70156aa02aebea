/**
 * iFlow argv (documented and recorded usage): `iflow --yolo -p PROMPT`; resume with
 * `iflow --yolo --resume=SESSION_ID -p MESSAGE`.
 */
import type { ResumeFlag } from '../resume-flags.js';
import type { ResumeArgsRequest, StartArgsRequest } from '../engine.js';

/** argv for a new session. */
export function buildIflowStartArgs(request: StartArgsRequest): string[] {
  if (request.passthrough.length > 0) return [...request.passthrough];
  return ['--yolo', '-p', request.prompt ?? ''];
}

/** argv for resuming `sessionId` with `message`. */
export function buildIflowResumeArgs(request: ResumeArgsRequest): string[] {
  return ['--yolo', `--resume=${request.sessionId}`, '-p', request.message];
}

/** The flag of `iflow` that picks the model (one of its resume flags, so a resume keeps the model). */
export const IFLOW_MODEL_FLAG = '-m';

/** Start flags that still apply with `--resume` (documented iflow usage). */
export const IFLOW_RESUME_FLAGS: readonly ResumeFlag[] = [
  { names: ['-m', '--model'], value: true },
  { names: ['-y', '--yolo'], value: false },
];
