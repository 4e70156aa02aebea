/**
 * Step 1 of an attempt, prepare: everything decided from the request alone, before anything exists. Every refusal of
 * a request (an unknown engine, a resume without a session, a run root in the user's HOME, a bad script) is thrown
 * here, so no run directory is made for it.
 */
import path from 'node:path';
import { AgentHarnessError } from '../errors/index.js';
import type { EngineAdapter } from '../engines/engine.js';
import { loadEngine, requireResume } from '../engines/registry.js';
import { loadModelScript, parseModelScript, type ModelScript } from '../model/index.js';
import type { IsolationMode, ModelMode, TranslateMode } from '../protocol/index.js';
import { probeNamespacesAsync, type NamespaceSupport } from '../runtime/isolation/probe.js';
import { resolveExpose, type ExposeRequest } from '../runtime/isolation/mount-plan.js';
import { resolveIsolationMode } from '../runtime/isolation/mode.js';
import { readIntegerSetting } from '../runtime/integer-setting.js';
import { assertNoEnvLeak } from '../runtime/leak-guard.js';
import { type AttemptRequest, DEFAULT_ATTEMPT_TIMEOUT_MS, type IoMode } from './attempt-request.js';
import { resolveEventMemoryBytes } from './event-spool.js';
import { hasWorkspaceSeed } from './workspace.js';

/** What an attempt will be, decided from its request: the output of {@link prepareAttempt}. */
export interface AttemptPlan {
  request: AttemptRequest;
  adapter: EngineAdapter;
  launch: 'start' | 'resume';
  /** The engine's resume arguments (resume only). */
  resumeArgs: NonNullable<EngineAdapter['buildResumeArgs']> | null;
  translateMode: TranslateMode;
  modelMode: ModelMode;
  /** The scripted model's script (scripted mode; undefined: the default script), and the file it came from. */
  script: ModelScript | undefined;
  scriptPath: string | null;
  io: IoMode;
  /** Null when the mode given is not valid: the attempt then fails where its isolation is opened (CONFIG_INVALID). */
  isolationMode: IsolationMode | null;
  /** The namespace probe, started here so that it runs while the run directory is made. */
  namespaceSupport: Promise<NamespaceSupport> | undefined;
  eventMemoryBytes: number;
  /** Host paths exposed to the agent on purpose, resolved and checked. */
  expose: ExposeRequest[];
  /** What the engine's stdin is before it starts. */
  initStdin: 'ignore' | { text: string };
  hostEnv: NodeJS.ProcessEnv;
}

/** Model modes whose cassettes are not built yet are capability-gated (seed 001, Decision 8), before any run exists. */
function requireModelMode(mode: ModelMode): void {
  if (mode !== 'replay' && mode !== 'record') return;
  throw new AgentHarnessError(
    'ENGINE_CAPABILITY_UNAVAILABLE',
    `model mode "${mode}" is not available yet (capability "model:${mode}": cassettes are not built); use "scripted" or "live".`,
    {
      details: { capability: `model:${mode}`, model: mode },
    },
  );
}

/**
 * A run belongs to one engine: adding an attempt of another engine to it (`start --run-dir <a codex run> claude`)
 * would mix two engines' sessions in one audit, so it is refused rather than silently run with the run's engine.
 */
function assertSameEngine(request: AttemptRequest): void {
  if (request.launch !== 'start' || !request.run || !request.engine || request.engine === request.run.engine) return;
  throw new AgentHarnessError(
    'USAGE_ERROR',
    `Run ${request.run.handle} is a ${request.run.engine} run; it cannot take a ${request.engine} attempt. Start a new run for ${request.engine}, or name ${request.run.engine}.`,
    { details: { run_id: request.run.run_id, run_engine: request.run.engine, engine: request.engine } },
  );
}

/** What a resume needs of its run; USAGE_ERROR or RUN_NO_SESSION when it is missing. */
function assertResumable(request: AttemptRequest): void {
  if (!request.run) throw new AgentHarnessError('USAGE_ERROR', 'resume needs an existing run.');
  if (!request.run.session_id) {
    throw new AgentHarnessError(
      'RUN_NO_SESSION',
      `Run ${request.run.run_id} has no session id recorded, so it cannot be resumed.`,
      { details: { run_id: request.run.run_id } },
    );
  }
  if (!request.message) throw new AgentHarnessError('USAGE_ERROR', 'resume needs a message.');
}

async function resolveScript(
  script: AttemptRequest['script'],
  projectRoot: string,
): Promise<{ script: ModelScript | undefined; path: string | null }> {
  if (script === undefined || script === null) return { script: undefined, path: null };
  if (typeof script === 'string') {
    const file = path.resolve(projectRoot, script);
    return { script: await loadModelScript(file), path: file };
  }
  return { script: parseModelScript(script, "the run's recorded script"), path: null };
}

/** The isolation mode asked for, or null when it is not valid (reported later, as a failed attempt). */
function isolationModeOf(request: AttemptRequest, hostEnv: NodeJS.ProcessEnv): IsolationMode | null {
  try {
    return request.isolation ?? resolveIsolationMode(undefined, hostEnv);
  } catch {
    return null;
  }
}

/** Checks the request and decides what the attempt will be; throws for a request that cannot be run. */
export async function prepareAttempt(request: AttemptRequest): Promise<AttemptPlan> {
  const hostEnv = request.hostEnv ?? process.env;
  const isolationMode = isolationModeOf(request, hostEnv);
  // The namespace probe (a process start, once per process) runs while the run directory is made.
  const namespaceSupport = isolationMode === 'off' || isolationMode === null ? undefined : probeNamespacesAsync();
  assertSameEngine(request);
  const adapter = await loadEngine(request.run?.engine ?? request.engine);
  const launch = request.launch;
  // Checked before anything is written: a timer past 2^31-1 ms, or NaN, would fire at once and kill the engine.
  readIntegerSetting({
    name: 'timeoutMs',
    value: request.timeoutMs,
    fallback: DEFAULT_ATTEMPT_TIMEOUT_MS,
    min: 1,
    max: 2_147_483_647,
    unit: 'ms',
  });
  const resumeArgs = launch === 'resume' ? requireResume(adapter) : null;
  if (launch === 'resume') assertResumable(request);
  if (hasWorkspaceSeed(request.workspace) && (launch !== 'start' || request.run)) {
    throw new AgentHarnessError(
      'USAGE_ERROR',
      'A workspace (template, files, git) seeds a new run only; it cannot be given with --run-dir or resume.',
    );
  }
  const modelMode = request.modelMode ?? request.run?.model_mode ?? 'scripted';
  requireModelMode(modelMode);
  const scriptInput = request.script ?? (launch === 'resume' ? (request.run?.script ?? null) : null);
  const script =
    modelMode === 'scripted'
      ? await resolveScript(scriptInput, request.paths.projectRoot)
      : { script: undefined, path: null };
  // Run directories get the engine's skill folders: a run root at HOME or under ~/.codex is refused before one exists.
  assertNoEnvLeak([request.paths.runRoot], hostEnv.HOME, 'Run root');
  if (request.runDir) assertNoEnvLeak([path.resolve(request.runDir)], hostEnv.HOME, 'Run directory');
  const expose = resolveExpose(request.expose, request.paths.projectRoot);
  return {
    request,
    adapter,
    launch,
    resumeArgs,
    translateMode: request.translateMode ?? request.run?.translate_mode ?? 0,
    modelMode,
    script: script.script,
    scriptPath: script.path,
    io: request.io ?? 'split',
    isolationMode,
    namespaceSupport,
    eventMemoryBytes: resolveEventMemoryBytes(request.eventMemoryBytes, hostEnv),
    expose,
    initStdin: adapter.stdin === 'ignore' ? 'ignore' : { text: '' },
    hostEnv,
  };
}
