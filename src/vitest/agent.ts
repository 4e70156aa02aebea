/**
 * The `agent` fixture's implementation: `agent.start(engine, options)` runs managed attempts against the test's
 * model server, records every attempt in `task.meta.agentHarness` (appended across retries) and aborts running
 * attempts when the test ends.
 */
import path from 'node:path';
import { isCassetteMode, type ModelModeOption } from '../cassette/mode.js';
import type { AttemptRequest } from '../core/attempt-request.js';
import { parseModelScript, type ModelLane, type ModelScript, type ModelTurn } from '../model/index.js';
import type { ExposeEntry } from '../runtime/isolation/mount-plan.js';
import { runAttempt } from '../core/run-attempt.js';
import { requireEngineId } from '../engines/registry.js';
import { resumeRequest } from '../core/session.js';
import type { AttemptResult } from '../core/attempt-result.js';
import type { EngineId, TranslateMode } from '../protocol/index.js';
import type { HarnessFixture, ModelFixture } from './fixtures.js';
import { type ProgressSender, progressSender, trackAttemptProgress } from './progress-channel.js';
import { checkAgentStartOptions } from './start-options.js';
import { ENGINES_ENV, enabledEngines } from './options.js';
import { attemptRecord, HarnessRun } from './run.js';
import { readAgentHarnessMeta, writeAgentHarnessMeta, type AgentHarnessAttemptRecord } from './types.js';
import { isUpdatingSnapshots } from './workflow.js';
import {
  type AgentTrialsOptions,
  type AgentTriggersOptions,
  runAgentTrials,
  runAgentTriggers,
  type TrialSet,
  type TrialsHost,
} from './trials.js';
import type { TriggerRecord, TriggerSummary } from '../evals/trigger.js';

/** Options of `agent.start()`. */
export interface AgentStartOptions {
  /** Prompt for the engine's headless command. */
  prompt?: string;
  /** Engine arguments passed verbatim instead of the default command. */
  args?: string[];
  /** Extra skill roots for this run (added after the configured ones; relative to the project root). */
  skills?: string[];
  /** Attempt timeout in ms (default: plugin `timeoutMs`, else the harness default). */
  timeoutMs?: number;
  /** Translate view recorded in the run. */
  translateMode?: TranslateMode;
  /** A directory copied into the run dir before the agent starts (relative to the project root). */
  template?: string;
  /** Files written into the run dir before the agent starts, by relative path. */
  files?: Readonly<Record<string, string | Uint8Array>>;
  /** Make the run dir a git repository with one initial commit (default: true with a template). */
  git?: boolean;
  /** Inject only these skills (by name) instead of every skill under the skill roots. */
  onlySkills?: readonly string[];
  /**
   * This run's own script (a script, or its turns), instead of the test's (`model.script`): for attempts that run at
   * once in one test with different scripts. Each run has its own lane of the test's server either way, so runs
   * never answer each other's requests; `run.resume(message, { turns })` appends to this script.
   */
  script?: ModelScript | readonly ModelTurn[];
  /** Model mode of this run (default: the plugin's `model`); `record`, `replay`, `auto` use a cassette. */
  model?: ModelModeOption;
  /**
   * The cassette file (relative to the project root). Default: `__cassettes__/<test file>/<name>.json` beside the
   * test file (`<name>.N.json` for its Nth attempt), `<name>` the test's full name with each run of characters other
   * than `[A-Za-z0-9._-]` made one `-` (docs/cassettes.md).
   */
  cassette?: string;
  /**
   * `replay` only: fork the cassette after its first `at` model turns onto the test's (or the run's) script, or the
   * live model (`to: 'live'`, the plugin's `upstream` or the vendor, with the key from the environment); `cassette`
   * records a live fork's conversation (docs/cassettes.md).
   */
  fork?: { at: number; to?: 'scripted' | 'live'; cassette?: string };
  /**
   * Host paths the agent sees beyond its workspace (after the plugin's `expose`), for this run's attempts: `PATH`,
   * `PATH:ro` or `{ path, readOnly }`, relative to the project root (docs/isolation.md).
   */
  expose?: readonly ExposeEntry[];
}

/** The `agent` fixture. */
export interface AgentFixture {
  /** Starts a managed run of `engine` against the test's model server. */
  start(engine: EngineId, options?: AgentStartOptions): Promise<HarnessRun>;
  /** Runs started by this test. */
  readonly runs: HarnessRun[];
  /**
   * Runs a case N times per arm (`trials`, default the plugin's), each an ordinary audited attempt, checked by `check`;
   * returns the records and statistics and writes them to the test's meta for the reporter (docs/evals.md).
   */
  trials(engine: EngineId, options: AgentTrialsOptions): Promise<TrialSet>;
  /** Runs labelled prompts once each and gives each skill's trigger precision and recall (docs/evals.md). */
  triggers(engine: EngineId, options: AgentTriggersOptions): Promise<TriggerSummary & { records: TriggerRecord[] }>;
}

/** The parts of the test context the agent fixture uses. */
export interface AgentFixtureContext {
  harness: HarnessFixture;
  model: ModelFixture;
  task: {
    meta: object;
    result?: { retryCount?: number } | undefined;
    name?: string;
    fullName?: string;
    fullTestName?: string;
    file?: { filepath?: string };
  };
  signal: AbortSignal;
  skip: (note?: string) => never;
  /** Vitest's `annotate` (absent outside a test run); used to attach each attempt's key audit files. */
  annotate?: (message: string, type?: string, attachment?: { path?: string; contentType?: string }) => Promise<unknown>;
}

/** What the fixture's steps read and change over one test: its state, explicit. */
interface FixtureState {
  readonly context: AgentFixtureContext;
  /** Aborted when the test ends (or Vitest aborts it): every attempt started here stops. */
  readonly controller: AbortController;
  /** Vitest's retry of this test (0 on the first run). */
  readonly retry: number;
  /** The attempts recorded by the test's earlier retries: the meta appends to them. */
  readonly previous: readonly AgentHarnessAttemptRecord[];
  /** The attempts of this run of the test. */
  readonly records: AgentHarnessAttemptRecord[];
  readonly runs: HarnessRun[];
  readonly progress: ProgressSender | null;
  readonly testName: string;
  /** The lanes of this test's runs, closed when the test ends. */
  readonly lanes: ModelLane[];
  /** Cassettes handed out so far (the Nth gets the suffix `.N`). */
  cassettes: number;
}

/** A run's lane of the test's server (opened by its first scripted attempt) and its own script, if any. */
interface RunLane {
  lane: ModelLane | null;
  own: ModelScript | null;
}

/** Runs the `agent` fixture: builds the fixture value, hands it to `use`, then aborts and records. */
export async function runAgentFixture(
  context: AgentFixtureContext,
  use: (agent: AgentFixture) => Promise<void>,
): Promise<void> {
  const { harness, task, signal } = context;
  const { config } = harness;
  const state: FixtureState = {
    context,
    controller: new AbortController(),
    retry: task.result?.retryCount ?? 0,
    previous: readAgentHarnessMeta(task.meta)?.attempts ?? [],
    records: [],
    runs: [],
    progress: config.progressSocket ? progressSender(config.progressSocket) : null,
    testName: task.fullTestName ?? task.fullName ?? task.name ?? 'vitest',
    lanes: [],
    cassettes: 0,
  };
  const abort = (): void => state.controller.abort();
  signal.addEventListener('abort', abort, { once: true });
  const agent: AgentFixture = {
    runs: state.runs,
    trials: (engine, options) => runAgentTrials(trialsHost(state, agent), engine, options),
    triggers: (engine, options) => runAgentTriggers(trialsHost(state, agent), engine, options),
    start: (engine, options = {}) => startRun(state, engine, options),
  };
  try {
    await use(agent);
  } finally {
    state.controller.abort();
    signal.removeEventListener('abort', abort);
    for (const lane of state.lanes) lane.close();
    const last = state.runs.at(-1);
    if (last) writeMeta(state, last);
  }
}

/** Runs an attempt, sending its live progress to the reporter (reads `progress`). */
async function runReported(state: FixtureState, engine: string, request: AttemptRequest): Promise<AttemptResult> {
  const tracker = trackAttemptProgress(state.progress, engine, state.testName);
  try {
    return await runAttempt(
      tracker.onRaspEvent
        ? {
            ...request,
            onRaspEvent: (event) => {
              request.onRaspEvent?.(event);
              tracker.onRaspEvent?.(event);
            },
          }
        : request,
    );
  } finally {
    tracker.end();
  }
}

/** Writes the test's meta for `run`: the earlier retries' attempts and this run's `records`. */
function writeMeta(state: FixtureState, run: HarnessRun): void {
  writeAgentHarnessMeta(state.context.task.meta, {
    engine: run.engine,
    runId: run.runId,
    handle: run.handle,
    sessionId: run.sessionId,
    attempts: [...state.previous, ...state.records],
  });
}

/** The test file (a stand-in under the project root when Vitest gives none). */
function testFileOf({ context }: FixtureState): string {
  return context.task.file?.filepath ?? path.join(context.harness.paths.projectRoot, 'agent.test.ts');
}

/** The test's name as a file name: each run of characters other than `[A-Za-z0-9._-]` made one `-`. */
function testFileNameOf({ context }: FixtureState): string {
  return (context.task.fullTestName ?? context.task.name ?? 'test').replace(/[^A-Za-z0-9._-]+/g, '-');
}

/** The cassette of the test's next attempt: beside the test file, after Vitest's snapshot convention; counts it. */
function cassetteOf(state: FixtureState, given: string | undefined): string {
  state.cassettes += 1;
  if (given) return path.resolve(state.context.harness.paths.projectRoot, given);
  const file = testFileOf(state);
  const suffix = state.cassettes > 1 ? `.${state.cassettes}` : '';
  return path.join(path.dirname(file), '__cassettes__', path.basename(file), `${testFileNameOf(state)}${suffix}.json`);
}

/**
 * Runs a scripted attempt on its run's lane of the test's server (opened by the run's first scripted attempt, kept
 * for its resumes, so the run keeps one base URL): its own script, else following the test's. Changes `lanes`.
 */
async function runOnLane(
  state: FixtureState,
  engine: string,
  request: AttemptRequest,
  run: RunLane,
): Promise<AttemptResult> {
  if (request.modelMode !== 'scripted') return runReported(state, engine, request);
  if (!run.lane) {
    run.lane = state.context.model.openLane(run.own ?? undefined);
    state.lanes.push(run.lane);
  }
  return runReported(state, engine, { ...request, modelServer: run.lane });
}

/** The parts of an attempt's request every start and resume shares: model mode, cassette, exposes, abort, timeout. */
function commonRequest(
  state: FixtureState,
  timeoutMs: number | undefined,
  options: Pick<AgentStartOptions, 'model' | 'cassette' | 'expose' | 'fork'> = {},
  own: ModelScript | null = null,
) {
  const { harness, model } = state.context;
  const { config } = harness;
  const mode = options.model ?? config.model;
  const timeout = timeoutMs ?? config.timeoutMs ?? undefined;
  const taped = isCassetteMode(mode);
  const expose = [...(config.expose ?? []), ...(options.expose ?? [])];
  return {
    ...(expose.length > 0 ? { expose } : {}),
    modelMode: mode,
    // A lenient replay's misses fall back to the run's script, else the test's.
    ...(taped ? { script: own ?? model.server.script } : {}),
    ...(taped
      ? {
          cassette: {
            path: cassetteOf(state, options.cassette),
            ...(config.upstream ? { upstream: config.upstream } : {}),
            ...(mode === 'auto' && isUpdatingSnapshots() ? { update: true } : {}),
            ...(options.fork
              ? {
                  forkAt: options.fork.at,
                  ...(options.fork.to ? { forkTo: options.fork.to } : {}),
                  ...(options.fork.cassette ? { forkCassette: options.fork.cassette } : {}),
                }
              : {}),
          },
        }
      : {}),
    hostEnv: harness.hostEnv,
    engineVersions: config.engineVersions ?? 'warn',
    signal: state.controller.signal,
    ...(timeout !== undefined ? { timeoutMs: timeout } : {}),
  };
}

/** Records an attempt of `run` (changes `records`, writes the meta) and attaches its key audit files to the test. */
async function trackAttempt(state: FixtureState, run: HarnessRun, result: AttemptResult): Promise<AttemptResult> {
  state.records.push(attemptRecord(result, state.retry));
  writeMeta(state, run);
  // Each attempt's key audit files travel with the test result (Vitest copies `path` attachments), so a
  // CI report links straight to them. Annotating is best-effort: it must never fail the test.
  const label = `${result.engine} attempt ${result.attempt}: ${result.completion.state} (${result.completion.reason})`;
  for (const [file, contentType] of [
    [result.audit.fcmp, 'application/x-ndjson'],
    [result.audit.meta, 'application/json'],
  ] as const) {
    await state.context
      .annotate?.(`${label} — ${file}`, 'agent-harness:audit', { path: file, contentType })
      .catch(() => undefined);
  }
  return result;
}

/** What `agent.trials` and `agent.triggers` need of the fixture. */
function trialsHost(state: FixtureState, agent: AgentFixture): TrialsHost {
  const { harness, model, task } = state.context;
  const file = testFileOf(state);
  return {
    start: (engine, options) => agent.start(engine, options),
    testScript: () => model.server.script,
    meta: task.meta,
    testName: state.testName,
    cassetteBase: path.join(path.dirname(file), '__cassettes__', path.basename(file), testFileNameOf(state)),
    projectRoot: harness.paths.projectRoot,
    mode: harness.config.model,
    defaultTrials: harness.config.trials ?? null,
  };
}

/** `agent.start()`: checks the engine and options, runs the first attempt, and gives the run (changes `runs`). */
async function startRun(state: FixtureState, engine: EngineId, options: AgentStartOptions): Promise<HarnessRun> {
  const { harness, model, skip } = state.context;
  const { config } = harness;
  checkAgentStartOptions(engine, options);
  // An id no engine is registered under is a mistake in the test (`codx`): ENGINE_UNKNOWN fails it. Only a known
  // engine the project left out of `engines` skips.
  requireEngineId(engine);
  if (config.engines && !config.engines.includes(engine))
    skip(
      enabledEngines(undefined, process.env)?.includes(engine) === false
        ? `engine ${engine} is known but not enabled in this run: ${ENGINES_ENV}=${process.env[ENGINES_ENV]} leaves it out`
        : `engine ${engine} is known but not enabled in this project: agentHarness({ engines: [${config.engines.map((id) => JSON.stringify(id)).join(', ')}] }) leaves it out; add ${JSON.stringify(engine)} to run this test`,
    );
  const extra = (options.skills ?? []).map((root) => path.resolve(harness.paths.projectRoot, root));
  const paths =
    extra.length > 0 ? { ...harness.paths, skillRoots: [...harness.paths.skillRoots, ...extra] } : harness.paths;
  const own =
    options.script === undefined
      ? null
      : parseModelScript(
          Array.isArray(options.script) ? { version: 1, turns: options.script } : options.script,
          `agent.start(${JSON.stringify(engine)}) script`,
        );
  const laned: RunLane = { lane: null, own };
  const first = await runOnLane(
    state,
    engine,
    {
      paths,
      engine,
      launch: 'start',
      prompt: options.prompt ?? null,
      ...(options.args ? { passthrough: options.args } : {}),
      ...(options.translateMode !== undefined ? { translateMode: options.translateMode } : {}),
      ...(options.onlySkills ? { onlySkills: options.onlySkills } : {}),
      label: state.testName,
      workspace: {
        ...(options.template ? { template: options.template } : {}),
        ...(options.files ? { files: options.files } : {}),
        ...(options.git !== undefined ? { git: options.git } : {}),
      },
      ...commonRequest(state, options.timeoutMs, options, own),
    },
    laned,
  );
  const run = new HarnessRun(first, async (self, message, resumeOptions) => {
    if (resumeOptions.turns?.length) {
      if (own) {
        laned.own = { ...own, turns: [...(laned.own ?? own).turns, ...resumeOptions.turns] };
        laned.lane?.appendTurns(resumeOptions.turns);
      } else model.append(...resumeOptions.turns);
    }
    const request = await resumeRequest({ runDir: self.runDir }, message, {
      paths,
      ...(options.onlySkills ? { onlySkills: options.onlySkills } : {}),
      ...commonRequest(
        state,
        resumeOptions.timeoutMs,
        {
          ...(options.model ? { model: options.model } : {}),
          ...(options.expose ? { expose: options.expose } : {}),
        },
        laned.own,
      ),
    });
    return trackAttempt(state, self, await runOnLane(state, self.engine, request, laned));
  });
  state.runs.push(run);
  await trackAttempt(state, run, first);
  return run;
}
