/**
 * Step 1 of an attempt, prepare: everything decided from the request alone, before anything exists. Every refusal of
 * a request (an unknown engine, an engine not installed, an unknown skill, a resume without a session, a run root in
 * the user's HOME, a bad script) is thrown here, so no run directory is made for it.
 */
import fs from 'node:fs';
import path from 'node:path';
import { AgentHarnessError } from '../errors/index.js';
import type { EngineAdapter } from '../engines/engine.js';
import { loadEngine, requireResume } from '../engines/registry.js';
import type { ModelScript } from '../model/script.js';
import type { IsolationMode, ModelMode } from '../protocol/index.js';
import { probeNamespacesAsync, type NamespaceSupport } from '../runtime/isolation/probe.js';
import { hostPathRule } from '../runtime/isolation/host-path-rule.js';
import { planMcpBinds } from '../runtime/isolation/mcp-binds.js';
import { resolveExpose } from '../runtime/isolation/mount-plan.js';
import { resolveIsolationMode } from '../runtime/isolation/mode.js';
import { readIntegerSetting } from '../runtime/integer-setting.js';
import { resolveExecutable } from '../runtime/executables.js';
import { engineInstallHint } from '../engines/install-hint.js';
import { checkedVersionState, describeCheckedVersions } from '../engines/engine-versions.js';
import { engineVersion } from '../runtime/engine-version.js';
import { assertNoEnvLeak } from '../runtime/leak-guard.js';
import { checkOnlySkills } from '../runtime/skills.js';
import { type AttemptRequest, type AttemptTransport, DEFAULT_ATTEMPT_TIMEOUT_MS } from './attempt-request.js';
import type { AttemptPlan } from './attempt-steps.js';
import { resolveEventMemoryBytes } from './event-spool.js';
import { auditRedactionOf, handsOutRealKey } from './audit-redaction.js';
import { assertMcpReachable } from './mcp-reach.js';
import { assertTemplateContained, hasWorkspaceSeed } from './workspace.js';

/**
 * The cassette of a record, replay or auto attempt (checked here: its file, its key); null in other modes, which
 * never load the cassette code.
 */
async function cassettePlanOf(
  request: AttemptRequest,
  mode: ModelMode | 'auto',
  adapter: EngineAdapter,
  hostEnv: NodeJS.ProcessEnv,
): Promise<AttemptPlan['cassette']> {
  if (mode !== 'record' && mode !== 'replay' && mode !== 'auto') return null;
  const { resolveCassetteFork, resolveCassettePace, resolveCassettePlan } = await import('../cassette/mode.js');
  const given = request.cassette;
  const plan = resolveCassettePlan({
    mode,
    file: given?.path ? path.resolve(request.paths.projectRoot, given.path) : null,
    wire: adapter.tools.wire,
    hostEnv,
    upstream: given?.upstream ?? null,
    ...(given?.update ? { update: true } : {}),
  });
  const pace = resolveCassettePace(given?.pace);
  const fork = resolveCassetteFork(plan, given, {
    mode,
    wire: adapter.tools.wire,
    hostEnv,
    root: request.paths.projectRoot,
  });
  return { ...plan, strict: given?.strict ?? true, pace, ...(fork ? { fork } : {}) };
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
  // The script schemas (zod) are loaded only to check a script given: the default script needs none.
  const { loadModelScript, parseModelScript } = await import('../model/script.js');
  if (typeof script === 'string') {
    const file = path.resolve(projectRoot, script);
    return { script: await loadModelScript(file), path: file };
  }
  return { script: parseModelScript(script, "the run's recorded script"), path: null };
}

/**
 * A run directory whose path the engine's tools cannot work in (gemini's path checks) is refused before it exists:
 * the run root (whose run directories add only a plain name), an explicit run directory, the resumed run's; each as
 * given and, where it exists, as its real path (what the engine sees).
 */
function assertWorkspacePath(adapter: EngineAdapter, request: AttemptRequest): void {
  if (!adapter.workspacePathProblem) return;
  const dirs = request.run
    ? [request.run.run_dir]
    : request.runDir
      ? [path.resolve(request.runDir)]
      : [request.paths.runRoot];
  for (const dir of dirs) {
    for (const seen of new Set([dir, realPathOrSelf(dir)])) {
      const problem = adapter.workspacePathProblem(seen);
      if (!problem) continue;
      throw new AgentHarnessError(
        'ENGINE_CAPABILITY_UNAVAILABLE',
        `${adapter.id} cannot work in a run directory under ${JSON.stringify(seen)}: ${problem}. Use a run root without it (--run-root, AGENT_HARNESS_RUN_ROOT).`,
        { details: { engine: adapter.id, capability: 'workspacePath', path: seen } },
      );
    }
  }
}

/** `dir`'s real path, or `dir` itself when it does not exist (yet). */
function realPathOrSelf(dir: string): string {
  try {
    return fs.realpathSync(dir);
  } catch {
    return dir;
  }
}

/**
 * The transport asked for, checked: `acp` needs the engine's ACP mode and split io, and takes no engine arguments
 * (the ACP command is the engine's own).
 */
function transportOf(adapter: EngineAdapter, request: AttemptRequest): AttemptTransport {
  const transport = request.transport ?? 'native';
  if (transport !== 'native' && transport !== 'acp')
    throw new AgentHarnessError(
      'CONFIG_INVALID',
      `transport must be 'native' or 'acp', not ${JSON.stringify(transport)}.`,
      { details: { field: 'transport' } },
    );
  if (transport === 'native') return transport;
  if (!adapter.acp)
    throw new AgentHarnessError(
      'ENGINE_CAPABILITY_UNAVAILABLE',
      `${adapter.id} has no ACP mode, so it cannot run over transport 'acp'; use transport 'native' or an engine with one.`,
      { details: { engine: adapter.id, capability: 'acp' } },
    );
  adapter.acp.installed?.();
  if ((request.io ?? 'split') !== 'split' || request.rawArgs || (request.passthrough?.length ?? 0) > 0)
    throw new AgentHarnessError(
      'USAGE_ERROR',
      `transport 'acp' runs ${adapter.id}'s ACP command with split output; it takes no terminal (io ${request.io ?? 'split'}) and no engine arguments.`,
      { details: { engine: adapter.id, capability: 'acp' } },
    );
  return transport;
}

/** The isolation mode asked for, or null when it is not valid (reported later, as a failed attempt). */
function isolationModeOf(request: AttemptRequest, hostEnv: NodeJS.ProcessEnv): IsolationMode | null {
  try {
    return request.isolation ?? resolveIsolationMode(undefined, hostEnv);
  } catch {
    return null;
  }
}

/** The timeout, checked before anything is written. */
function assertTimeout(request: AttemptRequest): void {
  // Checked before anything is written: a timer past 2^31-1 ms, or NaN, would fire at once and kill the engine.
  readIntegerSetting({
    name: 'timeoutMs',
    value: request.timeoutMs,
    fallback: DEFAULT_ATTEMPT_TIMEOUT_MS,
    min: 1,
    max: 2_147_483_647,
    unit: 'ms',
  });
}

/** What a resume needs of its run, and a workspace seed given only to a new run. */
function assertLaunch(request: AttemptRequest): void {
  if (request.launch === 'resume') assertResumable(request);
  if (hasWorkspaceSeed(request.workspace) && (request.launch !== 'start' || request.run)) {
    throw new AgentHarnessError(
      'USAGE_ERROR',
      'A workspace (template, files, git) seeds a new run only; it cannot be given with --run-dir or resume.',
    );
  }
}

/** The model the attempt talks to: its mode, its cassette and its script. */
async function modelOf(
  request: AttemptRequest,
  adapter: EngineAdapter,
  hostEnv: NodeJS.ProcessEnv,
  isolationMode: IsolationMode | null,
): Promise<Pick<AttemptPlan, 'modelMode' | 'cassette' | 'script' | 'scriptPath'>> {
  const askedMode = request.modelMode ?? request.run?.model_mode ?? 'scripted';
  const cassette = await cassettePlanOf(request, askedMode, adapter, hostEnv);
  const modelMode: ModelMode = cassette ? cassette.mode : (askedMode as ModelMode);
  assertMcpReachable(request.agentOptions?.mcpServers, modelMode, isolationMode);
  const scriptInput = request.script ?? (request.launch === 'resume' ? (request.run?.script ?? null) : null);
  // A lenient replay falls back to the script on a miss.
  const script =
    modelMode === 'scripted' || modelMode === 'replay'
      ? await resolveScript(scriptInput, request.paths.projectRoot)
      : { script: undefined, path: null };
  return { modelMode, cassette, script: script.script, scriptPath: script.path };
}

/**
 * The host paths of the attempt, checked before a run directory exists: its run root and directory, the engine's
 * own path checks, the skills asked for, the engine's executable, and every host path the caller's plan brings in.
 */
async function hostPathsOf(
  request: AttemptRequest,
  adapter: EngineAdapter,
  hostEnv: NodeJS.ProcessEnv,
): Promise<Pick<AttemptPlan, 'executable' | 'expose' | 'hostPathRule'>> {
  // Run directories get the engine's skill folders: a run root at HOME or under ~/.codex is refused before one exists.
  assertNoEnvLeak([request.paths.runRoot], hostEnv.HOME, 'Run root');
  if (request.runDir) assertNoEnvLeak([path.resolve(request.runDir)], hostEnv.HOME, 'Run directory');
  assertWorkspacePath(adapter, request);
  // Usage mistakes are refused here, before a run directory exists, so none leaves a failed run in `runs`, the
  // report and the viewer: a skill name no root has, an engine that is not installed.
  if (request.onlySkills) await checkOnlySkills(request.onlySkills, request.paths.skillRoots);
  const executable = resolveExecutable(adapter.executableName, request.paths, hostEnv.PATH, engineInstallHint(adapter));
  if (request.engineVersions === 'checked') assertCheckedVersion(adapter, executable);
  // Every host path the caller's plan brings in passes one rule, before the run directory is made (issue 42); skills
  // are checked as they are injected, where a bad skill fails the attempt with its audit.
  const rule = hostPathRule({ runRoot: request.paths.runRoot, home: hostEnv.HOME });
  const expose = resolveExpose(request.expose, request.paths.projectRoot, rule);
  planMcpBinds(request.agentOptions?.mcpServers, rule);
  if (hasWorkspaceSeed(request.workspace)) assertTemplateContained(request.workspace, request.paths.projectRoot, rule);
  return { executable, expose, hostPathRule: rule };
}

/**
 * Mode `require` refuses a host without namespaces before a run directory exists (mode `auto` decides its fallback
 * from the same probe, while the run directory is made; a plan once chosen never falls back: attempt-isolation.ts).
 */
async function assertRequiredIsolation(
  isolationMode: IsolationMode | null,
  namespaceSupport: Promise<NamespaceSupport> | undefined,
): Promise<void> {
  if (isolationMode !== 'require' || !namespaceSupport) return;
  const support = await namespaceSupport;
  const missing = !support.available
    ? support.reason
    : support.filesystem && !support.filesystem.available
      ? `filesystem containment is unavailable: ${support.filesystem.reason ?? 'unknown'}`
      : null;
  if (missing !== null)
    throw new AgentHarnessError(
      'ISOLATION_UNAVAILABLE',
      `Namespace isolation was required but is unavailable: ${missing}.`,
      { details: { reason: missing } },
    );
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
  assertTimeout(request);
  const transport = transportOf(adapter, request);
  // Over ACP a resume is the engine's session/load: its resume command line is not used.
  const resumeArgs = launch === 'resume' && transport === 'native' ? requireResume(adapter) : null;
  assertLaunch(request);
  const model = await modelOf(request, adapter, hostEnv, isolationMode);
  const hostPaths = await hostPathsOf(request, adapter, hostEnv);
  await assertRequiredIsolation(isolationMode, namespaceSupport);
  const auditRedaction = handsOutRealKey(model.modelMode, model.cassette?.fork?.to)
    ? await auditRedactionOf(hostEnv)
    : null;
  return {
    request,
    adapter,
    launch,
    resumeArgs,
    translateMode: request.translateMode ?? request.run?.translate_mode ?? 0,
    ...model,
    io: request.io ?? 'split',
    isolationMode,
    namespaceSupport,
    eventMemoryBytes: resolveEventMemoryBytes(request.eventMemoryBytes, hostEnv),
    ...hostPaths,
    initStdin: transport === 'acp' ? 'live' : adapter.stdin === 'ignore' ? 'ignore' : { text: '' },
    transport,
    hostEnv,
    auditRedaction,
  };
}

/**
 * Refuses an engine CLI whose version the adapter was not checked against (policy `checked`), before a run directory
 * exists: ENGINE_VERSION_UNCHECKED naming the version found and the checked ones. A version that cannot be read (a
 * binary of unknown origin) is refused too: nothing says it was checked.
 */
function assertCheckedVersion(adapter: EngineAdapter, executable: string): void {
  const version = engineVersion(executable, adapter.packageName);
  if (checkedVersionState(adapter, version) === true) return;
  const checked = describeCheckedVersions(adapter);
  throw new AgentHarnessError(
    'ENGINE_VERSION_UNCHECKED',
    `${adapter.id} ${version ?? '(version unknown)'} at ${executable} is not a version agent-harness checked ${adapter.id} against (${checked ?? 'none named'}); install ${adapter.packageName ?? adapter.executableName}@${typeof adapter.checkedVersions === 'string' ? adapter.checkedVersions : 'a checked version'}, or set engineVersions to 'warn' to run it marked unchecked.`,
    { details: { engine: adapter.id, version, checked, executable } },
  );
}
