/**
 * runAttempt: one managed attempt of an engine, start or resume. The CLI and the Vitest fixtures both call
 * this, so a test and a terminal session produce the same run directory.
 *
 * Order: reserve attempt N → model server → skills → engine config + trust → env + leak guard → executable →
 * meta (running) and fs-before → spawn (raw logs and RASP appended as they arrive) → [cleanup (config, trust,
 * namespaces, TMPDIR) alongside fs-after/diff → FCMP → run record and conformance] → meta (finished). Whatever
 * fails, the `finally` writes every audit file and removes the trust entry. Independent steps run at once: an
 * attempt's own cost is the harness's overhead on the engine's turn (issue 13).
 */
import fs from 'node:fs';
import path from 'node:path';
import { AgentHarnessError, toAgentHarnessError } from '../errors/index.js';
import { loadEngine, requireResume } from '../engines/registry.js';
import type { EngineAdapter, PreparedEngine } from '../engines/engine.js';
import { carryResumeFlags, withCarriedFlags } from '../engines/resume-flags.js';
import { applyAgentOptions } from '../engines/agent-options.js';
import { loadModelScript, parseModelScript, type ModelScript, type ModelServer } from '../model/index.js';
import type { AttemptMeta, ModelMode, Completion, ConformanceReport, FcmpEvent, FsDiff, RaspEvent, RunIndexEntry } from '../protocol/index.js';
import { writeJsonAtomic } from '../runtime/atomic-write.js';
import { buildEngineEnv, redactEnv } from '../runtime/env.js';
import { engineVersion } from '../runtime/engine-version.js';
import { NPM_LAUNCHERS_ENV, resolveExecutable } from '../runtime/executables.js';
import { diffSnapshots, snapshotTree, startSnapshot } from '../runtime/fs-snapshot.js';
import { assertNoEnvLeak } from '../runtime/leak-guard.js';
import { openIsolation, type AttemptIsolation } from '../runtime/isolation/attempt-isolation.js';
import { resolveIsolationMode } from '../runtime/isolation/mode.js';
import { probeNamespacesAsync } from '../runtime/isolation/probe.js';
import { keepSpare, takeSpare } from '../runtime/isolation/spare.js';
import { setSettingsKeys } from '../runtime/config-file.js';
import type { ProcessResult } from '../runtime/process-result.js';
import { createRun, reserveAttempt, updateRun } from '../runtime/run-store.js';
import { injectSkills } from '../runtime/skills.js';
import { createRaspBuilder } from '../translate/rasp-builder.js';
import type { CompletionJudgement } from '../translate/completion.js';
import { exitCodesFromModelRequests } from '../translate/tool-calls.js';
import { offeredSkills } from './offered-skills.js';
import { prepareNext, startEarly } from './early-start.js';
import { createFcmpTranslator } from '../translate/fcmp.js';
import { createConformanceTally } from '../translate/conformance.js';
import { initialMeta } from './attempt-meta.js';
import { StepClock } from './step-clock.js';
import { spawnEngine } from './spawn-engine.js';
import { excludeHarnessPaths, gitDiffPatch, hasWorkspaceSeed, seedWorkspace } from './workspace.js';
import { attemptAuditPaths, attemptGitDiffPath, attemptGitIndexPath, AuditWriteFailures, auditWriteFailed, clearAttemptPaths, ensureFsAuditFiles, fcmpSeqStart, RawLogWriter } from './audit-files.js';
import { writeOwnFileSync } from '../runtime/own-file.js';
import { EventSpool, resolveEventMemoryBytes } from './event-spool.js';
import { DEFAULT_ATTEMPT_TIMEOUT_MS, type AttemptRequest, type IoMode } from './attempt-request.js';
import { attemptResult, createRaspFacts, type AttemptResult } from './attempt-result.js';

export { DEFAULT_ATTEMPT_TIMEOUT_MS } from './attempt-request.js';
export type { AttemptRequest, AttemptReadyInfo, IoMode } from './attempt-request.js';

function nowIso(): string {
  return new Date().toISOString();
}

async function resolveScript(script: AttemptRequest['script'], projectRoot: string): Promise<{ script: ModelScript | undefined; path: string | null }> {
  if (script === undefined || script === null) return { script: undefined, path: null };
  if (typeof script === 'string') {
    const file = path.resolve(projectRoot, script);
    return { script: await loadModelScript(file), path: file };
  }
  return { script: parseModelScript(script, 'the run\'s recorded script'), path: null };
}

/**
 * The files a before-snapshot reads while the engine runs, at most (`hashLimit`): past that it reads none, and the
 * after-snapshot reads only what the engine changed (issue 13: 10,000 files may add ≤ 100 ms to an attempt).
 */
export const BEFORE_HASH_LIMIT = 2_000;

/** Model modes whose cassettes are not built yet are capability-gated (seed 001, Decision 8), before any run exists. */
function requireModelMode(mode: ModelMode): void {
  if (mode !== 'replay' && mode !== 'record') return;
  throw new AgentHarnessError('ENGINE_CAPABILITY_UNAVAILABLE', `model mode "${mode}" is not available yet (capability "model:${mode}": cassettes are not built); use "scripted" or "live".`, {
    details: { capability: `model:${mode}`, model: mode },
  });
}

/**
 * Writes `model-requests.N.jsonl` when the attempt's own server did not (it logs as it answers): the requests of a
 * shared server during the attempt, or none (live mode, or no request made). Every attempt has the file.
 */
function writeModelRequestLog(file: string, requests: readonly unknown[] | null): void {
  if (requests === null && fs.existsSync(file)) return;
  writeOwnFileSync(file, (requests ?? []).map((row) => `${JSON.stringify(row)}\n`).join(''));
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

/** The audit meta's schemas (~10 ms to build in a fresh process), loaded when first asked for. */
let metaSchema: Promise<typeof import('../protocol/meta.js')> | undefined;

/**
 * Loads the meta's schemas once the engine has been started: they check the final meta only, and a command's
 * only attempt then builds them while its engine runs, not before it starts (`setImmediate`: after the launch).
 */
function loadMetaSchema(): Promise<typeof import('../protocol/meta.js')> {
  return new Promise<void>((resolve) => setImmediate(resolve)).then(() => import('../protocol/meta.js'));
}

/** Runs one attempt and returns its result. Throws only for errors before a run directory exists. */
export async function runAttempt(request: AttemptRequest): Promise<AttemptResult> {
  const { paths } = request;
  const clock = new StepClock();
  // The namespace probe (a process start, once per process) runs while the run directory is made.
  const isolationMode = (() => {
    try {
      return request.isolation ?? resolveIsolationMode(undefined, request.hostEnv ?? process.env);
    } catch {
      return null; // reported where the isolation is opened, as a failed attempt
    }
  })();
  const namespaceSupport = isolationMode === 'off' || isolationMode === null ? undefined : probeNamespacesAsync();
  assertSameEngine(request);
  const eventMemoryBytes = resolveEventMemoryBytes(request.eventMemoryBytes, request.hostEnv ?? process.env);
  const adapter: EngineAdapter = await loadEngine(request.run?.engine ?? request.engine);
  const launch = request.launch;
  const resumeArgs = launch === 'resume' ? requireResume(adapter) : null;
  if (launch === 'resume') {
    if (!request.run) throw new AgentHarnessError('USAGE_ERROR', 'resume needs an existing run.');
    if (!request.run.session_id) {
      throw new AgentHarnessError('RUN_NO_SESSION', `Run ${request.run.run_id} has no session id recorded, so it cannot be resumed.`, { details: { run_id: request.run.run_id } });
    }
    if (!request.message) throw new AgentHarnessError('USAGE_ERROR', 'resume needs a message.');
  }
  if (hasWorkspaceSeed(request.workspace) && (launch !== 'start' || request.run)) {
    throw new AgentHarnessError('USAGE_ERROR', 'A workspace (template, files, git) seeds a new run only; it cannot be given with --run-dir or resume.');
  }
  const translateMode = request.translateMode ?? request.run?.translate_mode ?? 0;
  const modelMode = request.modelMode ?? request.run?.model_mode ?? 'scripted';
  requireModelMode(modelMode);
  const scriptInput = request.script ?? (launch === 'resume' ? request.run?.script ?? null : null);
  const resolvedScript = modelMode === 'scripted' ? await resolveScript(scriptInput, paths.projectRoot) : { script: undefined, path: null };
  // Run directories get the engine's skill folders: a run root at HOME or under ~/.codex is refused before one exists.
  const hostHome = (request.hostEnv ?? process.env).HOME;
  assertNoEnvLeak([paths.runRoot], hostHome, 'Run root');
  if (request.runDir) assertNoEnvLeak([path.resolve(request.runDir)], hostHome, 'Run directory');
  const io: IoMode = request.io ?? 'split';
  const initStdin = adapter.stdin === 'ignore' ? 'ignore' as const : { text: '' };
  // The attempt's own model server and its namespaces start now, while the run store does its work: neither needs
  // the run directory (the server logs requests there, and none comes before the engine runs). The namespaces'
  // init is a Node process, and its start-up is what a command's first attempt otherwise waits for before its engine
  // runs. An attempt on a shared server (the fixtures') takes the spare isolation its previous attempt prepared.
  let requestsLog: string | null = null;
  const earlyOptions = { script: resolvedScript.script, requestsLog: () => requestsLog, isolationMode, namespaceSupport, io, initStdin };
  const early = modelMode !== 'live' && !request.modelServer ? startEarly(earlyOptions) : null;
  let run: RunIndexEntry;
  let attempt: number;
  try {
    run = request.run ?? await createRun(paths.runRoot, { engine: adapter.id, translateMode, modelMode, script: resolvedScript.script ?? null, startArgs: request.passthrough?.length || request.rawArgs ? request.passthrough ?? [] : null, prompt: request.passthrough?.length || request.rawArgs ? null : request.prompt ?? null, label: request.label ?? null, ...(request.runDir ? { runDir: request.runDir } : {}) });
    attempt = await reserveAttempt(run.run_dir);
  } catch (error) {
    // Nothing of the attempt exists yet: what started early is closed before the error is reported.
    await early?.close();
    throw error;
  }
  const runDir = run.run_dir;
  const audit = attemptAuditPaths(runDir, attempt);
  requestsLog = audit.modelRequests;
  const auditFailures = new AuditWriteFailures();
  // What the agent may have put at this attempt's audit paths (a FIFO would hang the harness) is removed first.
  const occupied = clearAttemptPaths(runDir, attempt);
  const writer = new RawLogWriter(audit, auditFailures);
  writer.touch(io === 'split' ? ['stdout', 'stderr'] : ['pty', 'timing']);
  // The events are written as they are built and kept in memory only up to a budget: a long attempt's memory is flat.
  const raspSpool = new EventSpool<RaspEvent>(audit.rasp, auditFailures, eventMemoryBytes);
  const seen = createRaspFacts(request.run?.session_id ?? null);
  const tally = createConformanceTally();
  auditFailures.attempt(audit.stdin, () => writeOwnFileSync(audit.stdin, launch === 'resume' ? `${request.message}\n` : ''));

  const parser = adapter.createParser();
  const rasp = createRaspBuilder({
    runId: run.run_id,
    attempt,
    engine: adapter.id,
    parser,
    keepNoEvents: true,
    onEvent: (event) => {
      raspSpool.push(event);
      seen.push(event);
      request.onRaspEvent?.(event);
    },
  });
  if (occupied.length > 0) {
    rasp.diagnostic({ code: 'AUDIT_PATH_OCCUPIED', message: `Something already stood at this attempt's audit paths and was removed before it began: ${occupied.join(', ')} (the agent of an earlier attempt can write to .audit/).`, level: 'warning' });
  }
  const startedAt = new Date();
  let meta: AttemptMeta = initialMeta({ run, attempt, engine: adapter.id, executableName: adapter.executableName, skillRoot: adapter.skillRoot, launch, translateMode, modelMode, scriptPath: resolvedScript.path, io, paths, audit, startedAt });
  let ownedServer: ModelServer | null = null;
  let isolation: AttemptIsolation | null = null;
  /** Puts back the settings keys the agent options set for this attempt. */
  const restoreSettings: Array<() => Promise<void>> = [];
  let prepared: PreparedEngine | null = null;
  let processResult: ProcessResult | null = null;
  let harnessError: AgentHarnessError | null = null;
  let fsDiff: FsDiff | null = null;
  /** fs-before being written (from the spawn on), so that nothing writes it after the attempt is sealed. */
  let beforeWritten: Promise<unknown> | null = null;
  let fcmpSpool: EventSpool<FcmpEvent> | null = null;
  let conformance: ConformanceReport | null = null;
  let finalMessage: string | null = null;
  let completion: Completion = { state: 'unknown', reason: 'not_started' };
  // A shared server (the fixtures') logs every attempt of a test; this attempt's requests are those after this.
  const sharedRequestsBefore = request.modelServer?.requests?.length ?? 0;
  let toolExitCodes: ReadonlyMap<string, number> = new Map();
  /** This attempt's requests: its own server's, or those a shared server (the fixtures') got since it started. */
  const attemptRequests = () => ownedServer?.requests ?? request.modelServer?.requests?.slice(sharedRequestsBefore) ?? [];
  const attemptTmp = path.join(paths.tmpDir, `${run.handle}-${attempt}`);
  let spareKey: string | null = null;
  let keepNextSpare = (): void => undefined;
  let cleanup: Promise<unknown> | null = null;
  /**
   * Puts back what the attempt changed outside its run dir: config keys, trust entry, namespaces, the owned server,
   * TMPDIR. Independent of each other, so at once; started as soon as the engine has exited (it overlaps the
   * sealing), or by the `finally` when the attempt failed before. Returns the same promise when called again.
   */
  const startCleanup = (): Promise<unknown> => {
    cleanup ??= Promise.all([
      (async () => {
        for (const restore of restoreSettings.reverse()) await restore().catch(() => undefined);
        if (prepared) {
          await prepared.cleanup();
          if (meta.trust) meta.trust.removed_at = nowIso();
        }
      })().catch(() => undefined), // a trust entry left behind stays leased: a later command reclaims it
      isolation?.close().catch(() => undefined),
      ownedServer?.close().catch(() => undefined),
      early?.close(),
      fs.promises.rm(attemptTmp, { recursive: true, force: true }).catch(() => undefined),
    ]);
    return cleanup;
  };
  clock.mark('run_store');

  try {
    let modelUrl: string | null = null;
    if (modelMode !== 'live') {
      if (request.modelServer) modelUrl = request.modelServer.url;
      else {
        ownedServer = await early!.server;
        modelUrl = ownedServer.url;
      }
    }
    meta.model.base_url = modelUrl;
    clock.mark('model_server');
    // A bad AGENT_HARNESS_ISOLATION (isolationMode null above) throws CONFIG_INVALID here, failing the attempt.
    const isolationOptions = { mode: isolationMode ?? resolveIsolationMode(undefined, request.hostEnv ?? process.env), modelUrl, ...(namespaceSupport ? { support: namespaceSupport } : {}) };
    // With a shared model server (the fixtures': more attempts follow in this process) the previous attempt left an
    // isolation ready, its init already waiting; the next one is prepared when this attempt ends.
    spareKey = request.modelServer && io === 'split' && modelUrl !== null ? `${isolationOptions.mode}|${modelUrl}|${adapter.stdin}` : null;
    const openSpare = (): Promise<AttemptIsolation> => openIsolation({ ...isolationOptions, prestart: initStdin });
    keepNextSpare = () => {
      if (spareKey && isolation?.record.processes === 'pid-namespace') keepSpare(spareKey, openSpare);
    };
    isolation = (spareKey ? await takeSpare(spareKey) : null) ?? await early?.isolation ?? await openIsolation({ ...isolationOptions, ...(io === 'split' ? { prestart: initStdin } : {}) });
    early?.taken();
    meta.isolation = isolation.record;
    // The namespaces' init starts now, unless it started early, and sets up while the config is written (split
    // streams only: a PTY or `script` starts it in their own terminal).
    if (io === 'split') isolation.prestart(initStdin);
    clock.mark('isolation');
    if (isolation.record.reason !== null && isolation.record.mode === 'auto') {
      rasp.diagnostic({ code: 'ISOLATION_DEGRADED', message: `No namespaces for this attempt: ${isolation.record.reason}. Network: ${isolation.record.network}, processes: ${isolation.record.processes}.`, level: 'warning' });
    }
    if (hasWorkspaceSeed(request.workspace)) meta.workspace = await seedWorkspace(runDir, request.workspace, paths.projectRoot);
    meta.skill_injection = await injectSkills({ sourceRoots: paths.skillRoots, targetRoot: path.join(runDir, adapter.skillRoot), ...(request.onlySkills ? { only: request.onlySkills } : {}) });
    clock.mark('workspace_and_skills');
    // The leak guard runs before anything is written into the managed home.
    const hostEnv = request.hostEnv ?? process.env;
    assertNoEnvLeak([paths.agentHome, paths.tmpDir, paths.npmPrefix], hostEnv.HOME);
    for (const dir of [paths.agentHome, attemptTmp]) fs.mkdirSync(dir, { recursive: true });
    prepared = await adapter.prepare({ runDir, agentHome: paths.agentHome, modelMode, modelBaseUrl: modelUrl, profile: paths.codexProfile, interactive: io !== 'split' });
    meta.config_injection = prepared.configInjection;
    await excludeHarnessPaths(runDir, [`${adapter.skillRoot.split('/')[0]}/`]);
    meta.trust = prepared.trust ? { ...prepared.trust, registered_at: nowIso(), removed_at: null } : null;
    // Each attempt gets its own TMPDIR, removed after it: engines leave large files there (opencode unpacks a
    // 5 MB native library per run), and a shared one grew without bound.
    const options = applyAgentOptions(adapter, request.agentOptions, { runDir, attemptTmp });
    for (const file of options.files) writeOwnFileSync(file.path, file.content);
    for (const edit of options.settings) restoreSettings.push(await setSettingsKeys(edit.file, edit.keys));
    meta.agent_options = request.agentOptions ? options.record : null;
    const env = buildEngineEnv({ paths: { ...paths, tmpDir: attemptTmp }, hostEnv: request.hostEnv, modelMode, modelBaseUrl: modelUrl, liveEnvKeys: adapter.liveEnvKeys, engineEnv: { ...prepared.env, ...options.env } });
    const configRoots = [env.HOME, env.XDG_CONFIG_HOME, env.XDG_DATA_HOME, env.XDG_STATE_HOME, env.XDG_CACHE_HOME, env.TMPDIR, ...prepared.configRoots].filter((p): p is string => Boolean(p));
    assertNoEnvLeak(configRoots, hostEnv.HOME);
    const installed = resolveExecutable(adapter.executableName, paths, hostEnv.PATH);
    // A launcher script the adapter can stand in for exactly (codex's npm bin/codex.js) is skipped: the native
    // binary it would start starts directly, with the env the launcher would give it.
    const native = hostEnv[NPM_LAUNCHERS_ENV] === '1' ? null : adapter.resolveNativeLaunch?.(installed) ?? null;
    const executable = native?.file ?? installed;
    Object.assign(env, native?.env);
    meta.env = redactEnv(env);
    meta.engine_version = engineVersion(installed, adapter.packageName);
    const carry = resumeArgs && run.start_args ? carryResumeFlags(run.start_args, adapter.resumeFlags ?? []) : null;
    meta.resume_flags = carry;
    const engineArgs = resumeArgs
      ? withCarriedFlags(resumeArgs({ sessionId: run.session_id ?? '', message: request.message ?? '' }), carry?.carried ?? [], adapter.resumeFlags ?? [])
      : request.rawArgs ? [...(request.passthrough ?? [])] : adapter.buildStartArgs({ prompt: request.prompt ?? null, passthrough: request.passthrough ?? [] });
    const argv = [...prepared.leadingArgs, ...options.leadingArgs, ...engineArgs.filter((arg) => !options.dropArgs.includes(arg)), ...options.args];
    meta.command = { executable, argv, cwd: runDir, io, ...(native ? { launcher: native.launcher } : {}) };
    clock.mark('engine_config');
    // The meta (running) and the before-snapshot's listing at once: neither touches what the other reads. The
    // listing's content hashes are taken while the engine runs (startSnapshot), and fs-before is written once they
    // are, off the spawn's path (~50 ms for 10,000 files): a harness that dies in an attempt's first moments leaves
    // none, as it leaves no fs-after or fs-diff (its sealing, seal-attempt.ts, writes neither).
    const [, beforeSnapshot] = await Promise.all([writeJsonAtomic(audit.meta, meta), startSnapshot(runDir, { hashLimit: BEFORE_HASH_LIMIT })]);
    request.onReady?.({ run, attempt, executable, argv, translateMode, skills: meta.skill_injection, configRoots, modelUrl, io, isolation: isolation.record });
    clock.mark('fs_before');

    rasp.started({ launch, argv: [executable, ...argv], cwd: runDir, pid: null, io });
    const timeoutMs = request.timeoutMs ?? DEFAULT_ATTEMPT_TIMEOUT_MS;
    const engineRun = spawnEngine({
      io, file: executable, args: argv, cwd: runDir, env, timeoutMs, stdin: adapter.stdin, audit, writer, rasp,
      ...(request.signal ? { signal: request.signal } : {}),
      ...(request.hurry ? { hurry: request.hurry } : {}),
      ...(request.onOutput ? { onOutput: request.onOutput } : {}),
      ...(isolation.record.processes === 'pid-namespace' ? { isolation } : {}),
    });
    metaSchema ??= loadMetaSchema();
    const writingBefore = beforeSnapshot.finish().then(async (before) => {
      await writeJsonAtomic(audit.fsBefore, before, { pretty: false });
      return before;
    });
    // Awaited after the engine; a failure meanwhile must not be an unhandled rejection.
    beforeWritten = writingBefore.catch(() => undefined);
    processResult = await engineRun;
    clock.mark('engine');
    void startCleanup();
    if (processResult.spawnError) {
      harnessError = new AgentHarnessError('ENGINE_SPAWN_FAILED', `Could not start ${executable}: ${processResult.spawnError.message}`, { cause: processResult.spawnError, attempt });
      rasp.diagnostic({ code: 'ENGINE_SPAWN_FAILED', message: harnessError.message, level: 'error' });
    } else if (processResult.timedOut) {
      harnessError = new AgentHarnessError('ENGINE_TIMEOUT', `${adapter.id} did not finish within ${timeoutMs} ms; ${isolation?.record.processes === 'pid-namespace' ? 'every process of the attempt was killed (PID namespace)' : 'its process group was killed'}.`, { attempt });
    }
    // The skills the engine offered, as found in its first real model request (scripted mode), as a RASP event.
    const requestsSoFar = attemptRequests();
    if (modelMode !== 'live' && requestsSoFar.some((r) => r.wire !== null && r.response_kind !== 'side')) {
      rasp.recovered([{ type: 'engine.skills.offered', skills: offeredSkills(meta.skill_injection.skills.map((s) => s.name), requestsSoFar), source: 'model_request' }]);
    }
    // A live terminal attempt shows a TUI, not events: its session comes from the engine's own session store.
    if (io !== 'split' && adapter.recoverSession && !seen.sawSession) {
      rasp.recovered(await adapter.recoverSession({ runDir, agentHome: paths.agentHome, since: startedAt }).catch(() => []));
    }
    rasp.exited({
      exit_code: processResult.exitCode,
      signal: processResult.signal,
      timed_out: processResult.timedOut,
      canceled: processResult.canceled,
      duration_ms: processResult.durationMs,
    });
    // What the background hashing has not covered yet is read now, and fs-before written; the after-snapshot reuses
    // its hashes.
    const before = await writingBefore;
    const after = await snapshotTree(runDir);
    const diff = diffSnapshots(before, after, adapter.bookkeepingPaths);
    const [patch] = await Promise.all([
      gitDiffPatch(runDir, attemptGitIndexPath(runDir, attempt)),
      writeJsonAtomic(audit.fsAfter, after, { pretty: false }),
      writeJsonAtomic(audit.fsDiff, diff),
    ]);
    fsDiff = diff;
    if (patch !== null) {
      const file = attemptGitDiffPath(runDir, attempt);
      auditFailures.attempt(file, () => {
        writeOwnFileSync(file, patch);
        meta.files.gitDiff = path.relative(runDir, file);
      });
    }
    clock.mark('fs_after');
  } catch (error) {
    harnessError = toAgentHarnessError(error);
    rasp.diagnostic({ code: harnessError.code, message: harnessError.message, level: 'error' });
  } finally {
    // Already running when the engine ran; waited for below, before the meta records the trust entry's removal.
    const cleaned = startCleanup();
    // From here on a full disk is recorded per file (auditFailures), never thrown: the verdict and every file
    // that can still be written are kept, and the attempt ends AUDIT_WRITE_FAILED naming what is missing.
    await beforeWritten;
    await auditFailures.attemptAsync(audit.fsDiff, () => ensureFsAuditFiles(audit, runDir));
    const requests = attemptRequests();
    auditFailures.attempt(audit.modelRequests, () => writeModelRequestLog(audit.modelRequests, ownedServer && !ownedServer.logError ? null : requests));
    toolExitCodes = exitCodesFromModelRequests(requests);
    // The meta's list is the RASP event's (derived once, above); none when the engine made no real request.
    if (modelMode !== 'live') meta.skill_injection.offered = seen.offered ?? [];
    // A call whose argv the user wrote may start no session (`agent-harness codex --version`): not a failure.
    const expectSession = launch === 'resume' || (!request.rawArgs && (request.passthrough?.length ?? 0) === 0);
    // One pass over the events: the translator's own judge gives the verdict (a harness failure before the engine
    // ran overrides it), so the events are not judged twice.
    const translator = createFcmpTranslator({
      runId: run.run_id,
      engine: adapter.id,
      attempt,
      seqStart: fcmpSeqStart(runDir, attempt),
      launch,
      errorPatterns: adapter.errorPatterns,
      expectSession,
      replyText: launch === 'resume' ? request.message ?? null : null,
      sessionId: run.session_id,
      toolExitCodes,
    });
    const fcmp = new EventSpool<FcmpEvent>(audit.fcmp, auditFailures, eventMemoryBytes);
    fcmpSpool = fcmp;
    const emit = (events: readonly FcmpEvent[]): void => {
      for (const event of events) {
        fcmp.push(event);
        tally.fcmp(event);
        if (event.type === 'assistant.message.final') finalMessage = event.data.text;
      }
    };
    // The events again, from memory or (a long attempt) read back from rasp.N.jsonl, checked to be what was written.
    let tampered: AgentHarnessError | null = null;
    try {
      for (const event of raspSpool.events()) {
        tally.rasp(event);
        emit(translator.push(event));
      }
    } catch (error) {
      tampered = toAgentHarnessError(error);
      harnessError = tampered;
    }
    const failedBy = (error: AgentHarnessError): CompletionJudgement => ({ state: 'failed', reason: error.code, failure: { category: 'unknown', code: error.code, message: error.message }, evidenceSeq: null });
    const judged: CompletionJudgement = tampered ? failedBy(tampered) : harnessError && !processResult ? failedBy(harnessError) : translator.verdict();
    completion = { state: judged.state, reason: judged.reason, ...(judged.failure ? { code: judged.failure.code } : {}) };
    emit(translator.finish(judged));
    raspSpool.close();
    fcmp.close();
    writer.close();
    clock.mark('translate');
    const endedAt = new Date();
    const sessionId = seen.sessionId;
    const scriptInForce = request.modelServer ? request.modelServer.script ?? null : resolvedScript.script ?? null;
    // The run's record and index, while the rest is sealed: the attempt count comes from the meta files, which exist
    // since the attempt began (updateRun derives it under the index lock; concurrent resumes).
    const runUpdated = updateRun(paths.runRoot, run.run_id, {
      session_id: sessionId,
      last_completion: completion.state,
      // The script in force, inline: a shared server's (the fixtures', appended turns included), else the attempt's own.
      ...(scriptInForce ? { script: scriptInForce } : {}),
    }, attempt).catch(() => run);
    meta = {
      ...meta,
      status: 'finished',
      timings: { started_at: meta.timings.started_at, ended_at: endedAt.toISOString(), duration_ms: endedAt.getTime() - startedAt.getTime() },
      exit: processResult ? { code: processResult.exitCode, signal: processResult.signal, timed_out: processResult.timedOut, canceled: processResult.canceled } : null,
      session_id: sessionId,
      completion,
      usage: seen.usage,
      error: harnessError ? { code: harnessError.code, message: harnessError.message } : null,
    };
    const report = tally.report({ runId: run.run_id, engine: adapter.id, attempt, launch, completion, durationMs: meta.timings.duration_ms, engineVersion: meta.engine_version ?? null });
    conformance = report;
    const conformanceWritten = auditFailures.attemptAsync(audit.conformance, () => writeJsonAtomic(audit.conformance, report));
    await cleaned;
    clock.mark('cleanup');
    await conformanceWritten;
    clock.mark('conformance');
    meta.timings.steps = clock.record();
    if (auditFailures.list.length > 0) {
      const failed = auditWriteFailed(audit, attempt, auditFailures.list, harnessError);
      harnessError = failed;
      meta.error = { code: failed.code, message: failed.message };
    }
    // Checked once, so without zod's JIT: compiling a parser for the meta's ~30 object schemas costs a command's only
    // attempt ~6 ms more than it saves (the index's lines, parsed by the hundred, keep the JIT).
    const { AttemptMetaSchema } = await (metaSchema ??= loadMetaSchema());
    await auditFailures.attemptAsync(audit.meta, () => writeJsonAtomic(audit.meta, AttemptMetaSchema.parse(meta, { jitless: true })));
    if (auditFailures.has(audit.meta)) harnessError = auditWriteFailed(audit, attempt, auditFailures.list, harnessError);
    run = await runUpdated;
    // Last, so the next attempt's namespaces start after this one's bookkeeping, not during it.
    keepNextSpare();
    // In the daemon: the next attempt's own model server and init, made ready while it waits for the next command.
    if (early) prepareNext(earlyOptions);
  }

  return attemptResult({
    runId: run.run_id,
    handle: run.handle,
    runDir,
    engine: adapter.id,
    attempt,
    launch,
    sessionId: meta.session_id,
    exitCode: processResult?.exitCode ?? null,
    signal: processResult?.signal ?? null,
    timedOut: processResult?.timedOut ?? false,
    completion,
    finalMessage,
    fsDiff,
    usage: meta.usage,
    durationMs: meta.timings.duration_ms ?? 0,
    engineVersion: meta.engine_version ?? null,
    skillsInjected: meta.skill_injection.skills.map((s) => s.name),
    skillsOffered: meta.skill_injection.offered ?? null,
    audit,
    conformance: conformance!,
    error: harnessError,
  }, { rasp: raspSpool, fcmp: fcmpSpool!, toolExitCodes });
}
