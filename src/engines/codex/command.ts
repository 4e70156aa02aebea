/**
 * codex argv, as measured on 0.169.0: `codex exec --json --skip-git-repo-check PROMPT` with stdin closed (an
 * open stdin makes codex wait for EOF), and `codex exec resume --json --skip-git-repo-check THREAD_ID PROMPT`.
 * `exec resume` has no `-s` flag, so the sandbox comes from the profile.
 */
import type { ResumeFlag } from '../resume-flags.js';
import type { ResumeArgsRequest, StartArgsRequest } from '../engine.js';

/** argv for a new session: the passthrough as given, else the default headless command with the prompt. */
export function buildCodexStartArgs(request: StartArgsRequest): string[] {
  if (request.passthrough.length > 0) return [...request.passthrough];
  return ['exec', '--json', '--skip-git-repo-check', request.prompt ?? ''];
}

/** argv for resuming thread `sessionId` with `message`. */
export function buildCodexResumeArgs(request: ResumeArgsRequest): string[] {
  return ['exec', 'resume', '--json', '--skip-git-repo-check', request.sessionId, request.message];
}

/**
 * The command codex's TUI names when it exits ("To continue this session, run: codex resume <id>", 0.169.0; the
 * string is in the binary's `tui` crate).
 */
export const CODEX_NATIVE_RESUME_COMMAND = 'codex resume';

/** The flag of `codex` that picks the model (one of its resume flags, so a resume keeps the model). */
export const CODEX_MODEL_FLAG = '-m';

/** Start flags `codex exec resume` accepts too (0.169.0 `codex exec resume --help`). */
export const CODEX_RESUME_FLAGS: readonly ResumeFlag[] = [
  { names: ['-m', '--model'], value: true },
  { names: ['-c', '--config'], value: true },
  { names: ['--enable'], value: true },
  { names: ['--disable'], value: true },
  { names: ['--strict-config'], value: false },
  { names: ['--dangerously-bypass-approvals-and-sandbox'], value: false },
  { names: ['--skip-git-repo-check'], value: false },
  { names: ['--ignore-user-config'], value: false },
  { names: ['--ignore-rules'], value: false },
  { names: ['--json'], value: false },
  { names: ['--output-schema'], value: true },
];
