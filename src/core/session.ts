/**
 * The session unit: a conversation with an engine is a run, started once and resumed turn by turn. The CLI
 * (`start`, `resume <handle>`), the Vitest fixtures (`agent.start`, `run.resume`) and the providers (`query`,
 * `resumeSessionId`) all find the run to resume here, and run its turns through {@link runAttempt}, so the three
 * faces resolve handles, session ids and interrupted attempts alike.
 */
import { AgentHarnessError } from '../errors/index.js';
import type { EngineId, RunIndexEntry } from '../protocol/index.js';
import type { HarnessPaths } from '../runtime/paths.js';
import {
  listRuns,
  readRunRecord,
  refreshRunIndex,
  resolveRunSelector,
  type RunStoreReadOptions,
  unwritableErrno,
} from '../runtime/run-store.js';
import type { AttemptRequest } from './attempt-request.js';
import { recoverRun } from './seal-interrupted.js';

/**
 * Which run to resume: a selector as a user types it (a handle or a unique prefix of one, a run id, a run
 * directory), the run directory a test holds, or the engine's own session id (the newest run of that engine that has
 * it).
 */
export type RunLocator = { selector: string } | { runDir: string } | { sessionId: string; engine: EngineId };

/** The run a locator names, in the run store under `paths.runRoot`; RUN_NOT_FOUND (or RUN_SELECTOR_AMBIGUOUS) if none. */
async function locateRun(
  paths: Pick<HarnessPaths, 'runRoot'>,
  locator: RunLocator,
  options: RunStoreReadOptions,
): Promise<RunIndexEntry> {
  if ('selector' in locator) return resolveRunSelector(paths.runRoot, locator.selector, undefined, options);
  if ('runDir' in locator) {
    const record = readRunRecord(locator.runDir);
    if (!record)
      throw new AgentHarnessError('RUN_NOT_FOUND', `${locator.runDir} holds no run record (.audit/run.json).`, {
        details: { runDir: locator.runDir },
      });
    return record;
  }
  const bySession = (runs: readonly RunIndexEntry[]) =>
    runs.findLast((run) => run.session_id === locator.sessionId && run.engine === locator.engine);
  // The index is a cache: a miss rescans the run directories (a stale index still parses).
  const run =
    bySession(await listRuns(paths.runRoot)) ?? bySession((await refreshRunIndex(paths.runRoot, options)).runs);
  if (!run) {
    throw new AgentHarnessError(
      'RUN_NOT_FOUND',
      `No ${locator.engine} run under ${paths.runRoot} has session ${locator.sessionId}.`,
      { details: { sessionId: locator.sessionId, engine: locator.engine } },
    );
  }
  return run;
}

/**
 * Finds the run a locator names and seals what an earlier harness left unfinished in it (an attempt whose process
 * died), so that its session id is known and the next attempt's number is right. With `options.onUnsaved` (a reader),
 * a run root that cannot be written is no error: the index is rebuilt in memory and an orphan left unsealed, and
 * `onUnsaved` hears why.
 */
export async function findRun(
  paths: Pick<HarnessPaths, 'runRoot' | 'agentHome'>,
  locator: RunLocator,
  options: RunStoreReadOptions = {},
): Promise<RunIndexEntry> {
  const run = await locateRun(paths, locator, options);
  try {
    return await recoverRun(paths, run);
  } catch (error) {
    // A reader (`translate`) of a run root that cannot be written takes the run as it is, unsealed.
    const errno = unwritableErrno(error);
    if (!errno || !options.onUnsaved) throw error;
    options.onUnsaved(
      `The run ${run.handle} has an interrupted attempt that cannot be sealed (${errno} writing under ${run.run_dir}): it is read as it is.`,
    );
    return run;
  }
}

/** What a resume takes besides the run: everything of an attempt request but its launch, run and engine. */
export type ResumeOptions = Omit<AttemptRequest, 'launch' | 'run' | 'engine' | 'message'>;

/** The attempt request of the next turn of a run's session: `message` sent to the run `locator` names. */
export async function resumeRequest(
  locator: RunLocator,
  message: string,
  options: ResumeOptions,
): Promise<AttemptRequest> {
  const run = await findRun(options.paths, locator);
  return { ...options, engine: run.engine, launch: 'resume', run, message };
}
