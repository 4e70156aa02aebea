/**
 * One resume of a run at a time. Two resumes of one session at once would both run the engine on the same session
 * files (claude, gemini and opencode let them, and both write; codex refuses the second itself), so a resume holds
 * its run's session lock for its whole attempt, and a second one, from this process or another, is refused with
 * ENGINE_SESSION_BUSY before it makes an attempt. The lock lives in the run's `.audit/` (proper-lockfile's
 * `session.lock` directory, kept fresh while held; a holder that died leaves it stale and the next resume takes it).
 */
import path from 'node:path';
import { AgentHarnessError } from '../errors/index.js';
import type { RunIndexEntry } from '../protocol/index.js';
import { tryFileLock } from '../runtime/file-lock.js';
import { AUDIT_DIR } from '../runtime/run-record.js';

/** The file whose lock a resume of the run in `runDir` holds. */
export function sessionLockPath(runDir: string): string {
  return path.join(runDir, AUDIT_DIR, 'session');
}

/** Takes `run`'s session lock, or throws ENGINE_SESSION_BUSY; the returned function gives it back. */
export function takeSessionLock(run: Pick<RunIndexEntry, 'run_dir' | 'handle'>): () => void {
  const release = tryFileLock(sessionLockPath(run.run_dir));
  if (release) return release;
  throw new AgentHarnessError(
    'ENGINE_SESSION_BUSY',
    `Run ${run.handle} is being resumed by another attempt right now, and its session takes one writer at a time; wait for that attempt to end, then resume again.`,
    { details: { handle: run.handle, runDir: run.run_dir } },
  );
}
