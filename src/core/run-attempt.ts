/**
 * runAttempt: one managed attempt of an engine, start or resume. The CLI and the Vitest fixtures both call
 * this, so a test and a terminal session produce the same run directory.
 *
 * Order: reserve attempt N → model server → skills → engine config + trust → env + leak guard → executable →
 * meta (running) → fs-before → spawn (raw logs and RASP appended as they arrive) → fs-after/diff → FCMP →
 * meta (finished) → index. Whatever fails, the `finally` writes every audit file and removes the trust entry.
 */
import fs from 'node:fs';
import path from 'node:path';
import { AgentHarnessError, toAgentHarnessError } from '../errors/index.js';
import { getEngine, requireResume } from '../engines/registry.js';
import type { EngineAdapter, PreparedEngine } from '../engines/engine.js';
import { loadModelScript, startModelServer, type ModelScript, type ModelServer } from '../model/index.js';
import {
  AttemptMetaSchema,
  META_VERSION,
  type AttemptMeta,
  type Completion,
  type EngineId,
  type FcmpEvent,
  type FsDiff,
  type ModelMode,
  type RaspEvent,
  type RunIndexEntry,
  type SkillInjection,
  type StreamName,
  type TranslateMode,
} from '../protocol/index.js';
import { writeJsonAtomic } from '../runtime/atomic-write.js';
import { buildEngineEnv, redactEnv } from '../runtime/env.js';
import { resolveExecutable } from '../runtime/executables.js';
import { diffSnapshots, snapshotTree } from '../runtime/fs-snapshot.js';
import { assertNoEnvLeak } from '../runtime/leak-guard.js';
import { runPassthrough } from '../runtime/passthrough.js';
import type { HarnessPaths } from '../runtime/paths.js';
import type { ProcessResult } from '../runtime/process-result.js';
import { runProcess } from '../runtime/process.js';
import { runPty } from '../runtime/pty.js';
import { createRun, reserveAttempt, updateRun } from '../runtime/run-store.js';
import { injectSkills } from '../runtime/skills.js';
import { createLineSplitter, type SplitLine } from '../translate/line-splitter.js';
import { feedLine } from '../translate/feed.js';
import { createRaspBuilder } from '../translate/rasp-builder.js';
import { judgeCompletion } from '../translate/completion.js';
import { translateRaspToFcmp } from '../translate/fcmp.js';
import { buildConformanceReport } from '../translate/conformance.js';
import { attemptAuditPaths, lastFcmpSeq, RawLogWriter, writeJsonl } from './audit-files.js';
import { collectAssistantMessages, collectToolCalls, lastSessionId, lastUsage, type AttemptResult } from './attempt-result.js';

/** Default attempt timeout: 10 minutes. */
export const DEFAULT_ATTEMPT_TIMEOUT_MS = 600_000;

/** How the engine's terminal is wired. */
export type IoMode = 'split' | 'pty' | 'passthrough';

/** Everything one attempt needs. */
export interface AttemptRequest {
  /** Resolved harness paths. */
  paths: HarnessPaths;
  /** Engine id (start) — ignored for resume, which uses the run's engine. */
  engine: EngineId | string;
  /** `start` (new session) or `resume` (next message in the run's session). */
  launch: 'start' | 'resume';
  /** Existing run to add the attempt to (required for resume; optional for start = `--run-dir`). */
  run?: RunIndexEntry;
  /** Prompt for the engine's default headless command (start without passthrough args). */
  prompt?: string | null;
  /** Engine arguments passed verbatim (start). */
  passthrough?: readonly string[];
  /** The next user message (resume). */
  message?: string;
  /** Translate view recorded in the run (default 0). */
  translateMode?: TranslateMode;
  /** Model mode (default `scripted`). */
  modelMode?: ModelMode;
  /** Script for the scripted model: a parsed script or a path to a JSON file. */
  script?: ModelScript | string | null;
  /** Use this model server instead of starting one (fixtures share one per test). */
  modelServer?: Pick<ModelServer, 'url'> | null;
  /** Terminal wiring (default `split`). */
  io?: IoMode;
  /** Attempt timeout in ms. */
  timeoutMs?: number;
  /** Cancels the attempt (the process group is killed). */
  signal?: AbortSignal;
  /** Host environment (default `process.env`): where the allowlist and live keys come from. */
  hostEnv?: NodeJS.ProcessEnv;
  /** Raw output as it arrives (for live views). */
  onOutput?: (stream: StreamName, chunk: Uint8Array) => void;
  /** RASP events as they are built (for live views). */
  onRaspEvent?: (event: RaspEvent) => void;
  /** Called once the run and attempt are known, before the engine starts. */
  onReady?: (info: AttemptReadyInfo) => void;
}

/** What is known just before the engine starts; printed by the CLI before `runtime begin`. */
export interface AttemptReadyInfo {
  run: RunIndexEntry;
  attempt: number;
  executable: string;
  argv: string[];
  translateMode: TranslateMode;
  skills: SkillInjection;
  configRoots: string[];
  modelUrl: string | null;
  io: IoMode;
}

function nowIso(): string {
  return new Date().toISOString();
}

async function resolveScript(script: AttemptRequest['script'], projectRoot: string): Promise<{ script: ModelScript | undefined; path: string | null }> {
  if (script === undefined || script === null) return { script: undefined, path: null };
  if (typeof script === 'string') {
    const file = path.resolve(projectRoot, script);
    return { script: await loadModelScript(file), path: file };
  }
  return { script, path: null };
}

/** Runs one attempt and returns its result. Throws only for errors before a run directory exists. */
export async function runAttempt(request: AttemptRequest): Promise<AttemptResult> {
  const { paths } = request;
  const adapter: EngineAdapter = getEngine(request.run?.engine ?? request.engine);
  const launch = request.launch;
  const resumeArgs = launch === 'resume' ? requireResume(adapter) : null;
  if (launch === 'resume') {
    if (!request.run) throw new AgentHarnessError('USAGE_ERROR', 'resume needs an existing run.');
    if (!request.run.session_id) {
      throw new AgentHarnessError('RUN_NO_SESSION', `Run ${request.run.run_id} has no session id recorded, so it cannot be resumed.`, { details: { run_id: request.run.run_id } });
    }
    if (!request.message) throw new AgentHarnessError('USAGE_ERROR', 'resume needs a message.');
  }
  const translateMode = request.translateMode ?? request.run?.translate_mode ?? 0;
  const modelMode = request.modelMode ?? request.run?.model_mode ?? 'scripted';
  const scriptInput = request.script ?? (launch === 'resume' ? request.run?.script ?? null : null);
  const resolvedScript = modelMode === 'scripted' ? await resolveScript(scriptInput, paths.projectRoot) : { script: undefined, path: null };
  let run = request.run ?? await createRun(paths.runRoot, { engine: adapter.id, translateMode, modelMode, script: resolvedScript.path });
  const runDir = run.run_dir;
  const attempt = await reserveAttempt(runDir);
  const audit = attemptAuditPaths(runDir, attempt);
  const writer = new RawLogWriter(audit);
  const io: IoMode = request.io ?? 'split';
  writer.touch(io === 'split' ? ['stdout', 'stderr', 'rasp'] : ['pty', 'timing', 'rasp']);
  if (io === 'split') writer.touch(['stdout', 'stderr']);
  fs.writeFileSync(audit.stdin, launch === 'resume' ? `${request.message}\n` : '');

  const parser = adapter.createParser();
  const splitter = createLineSplitter();
  const rasp = createRaspBuilder({
    runId: run.run_id,
    attempt,
    engine: adapter.id,
    parser,
    onEvent: (event) => {
      writer.rasp(event);
      request.onRaspEvent?.(event);
    },
  });
  const startedAt = new Date();
  let meta: AttemptMeta = {
    version: META_VERSION,
    run_id: run.run_id,
    handle: run.handle,
    attempt,
    engine: adapter.id,
    launch,
    status: 'running',
    translate_mode: translateMode,
    model: { mode: modelMode, base_url: null, script: resolvedScript.path },
    command: { executable: adapter.executableName, argv: [], cwd: runDir, io },
    env: {},
    timings: { started_at: startedAt.toISOString(), ended_at: null, duration_ms: null },
    exit: null,
    session_id: run.session_id,
    completion: null,
    usage: null,
    skill_injection: { source_roots: paths.skillRoots, target_root: path.join(runDir, adapter.skillRoot), skill_count: 0, skills: [] },
    config_injection: null,
    trust: null,
    error: null,
    files: Object.fromEntries(Object.entries(audit).filter(([key]) => key !== 'dir').map(([key, file]) => [key, path.relative(runDir, file)])),
  };
  let ownedServer: ModelServer | null = null;
  let prepared: PreparedEngine | null = null;
  let processResult: ProcessResult | null = null;
  let harnessError: AgentHarnessError | null = null;
  let fsDiff: FsDiff | null = null;
  let fcmp: FcmpEvent[] = [];
  let completion: Completion = { state: 'unknown', reason: 'not_started' };

  try {
    let modelUrl: string | null = null;
    if (modelMode !== 'live') {
      if (request.modelServer) modelUrl = request.modelServer.url;
      else {
        ownedServer = await startModelServer({ ...(resolvedScript.script ? { script: resolvedScript.script } : {}), logFile: path.join(audit.dir, `model-requests.${attempt}.jsonl`) });
        modelUrl = ownedServer.url;
      }
    }
    meta.model.base_url = modelUrl;
    meta.skill_injection = await injectSkills({ sourceRoots: paths.skillRoots, targetRoot: path.join(runDir, adapter.skillRoot) });
    // The leak guard runs before anything is written into the managed home.
    const hostEnv = request.hostEnv ?? process.env;
    assertNoEnvLeak([paths.agentHome, paths.tmpDir, paths.npmPrefix], hostEnv.HOME);
    for (const dir of [paths.agentHome, paths.tmpDir]) fs.mkdirSync(dir, { recursive: true });
    prepared = await adapter.prepare({ runDir, agentHome: paths.agentHome, modelMode, modelBaseUrl: modelUrl, profile: paths.codexProfile });
    meta.config_injection = prepared.configInjection;
    meta.trust = prepared.trust ? { ...prepared.trust, registered_at: nowIso(), removed_at: null } : null;
    const env = buildEngineEnv({ paths, hostEnv: request.hostEnv, modelMode, modelBaseUrl: modelUrl, liveEnvKeys: adapter.liveEnvKeys, engineEnv: prepared.env });
    meta.env = redactEnv(env);
    const configRoots = [env.HOME, env.XDG_CONFIG_HOME, env.XDG_DATA_HOME, env.XDG_STATE_HOME, env.XDG_CACHE_HOME, env.TMPDIR, ...prepared.configRoots].filter((p): p is string => Boolean(p));
    assertNoEnvLeak(configRoots, hostEnv.HOME);
    const executable = resolveExecutable(adapter.executableName, paths, hostEnv.PATH);
    const engineArgs = resumeArgs
      ? resumeArgs({ sessionId: run.session_id ?? '', message: request.message ?? '' })
      : adapter.buildStartArgs({ prompt: request.prompt ?? null, passthrough: request.passthrough ?? [] });
    const argv = [...prepared.leadingArgs, ...engineArgs];
    meta.command = { executable, argv, cwd: runDir, io };
    await writeJsonAtomic(audit.meta, meta);
    request.onReady?.({ run, attempt, executable, argv, translateMode, skills: meta.skill_injection, configRoots, modelUrl, io });

    const before = await snapshotTree(runDir);
    await writeJsonAtomic(audit.fsBefore, before);

    const parseLine = (line: SplitLine): void => feedLine(rasp, line);
    const feed = (stream: StreamName, chunk: Uint8Array): void => {
      const from = writer.append(stream, chunk);
      request.onOutput?.(stream, chunk);
      for (const line of splitter.push(stream, chunk, from)) parseLine(line);
    };
    rasp.started({ launch, argv: [executable, ...argv], cwd: runDir, pid: null, io });
    const common = { file: executable, args: argv, cwd: runDir, env, timeoutMs: request.timeoutMs ?? DEFAULT_ATTEMPT_TIMEOUT_MS, ...(request.signal ? { signal: request.signal } : {}) };
    if (io === 'pty') {
      processResult = await runPty({ ...common, onChunk: (stream, chunk) => feed(stream, chunk), onTiming: (line) => writer.timing(line) });
    } else if (io === 'passthrough') {
      processResult = await runPassthrough({ ...common, logOut: audit.ptyOutput, logTiming: audit.ptyTiming });
      const logged = fs.existsSync(audit.ptyOutput) ? fs.readFileSync(audit.ptyOutput) : Buffer.alloc(0);
      for (const line of splitter.push('pty', logged, 0)) parseLine(line);
    } else {
      processResult = await runProcess({ ...common, stdin: adapter.stdin === 'ignore' ? 'ignore' : { text: '' }, onChunk: (stream, chunk) => feed(stream, chunk) });
    }
    for (const line of splitter.flush()) parseLine(line);
    if (processResult.spawnError) {
      harnessError = new AgentHarnessError('ENGINE_SPAWN_FAILED', `Could not start ${executable}: ${processResult.spawnError.message}`, { cause: processResult.spawnError, attempt });
      rasp.diagnostic({ code: 'ENGINE_SPAWN_FAILED', message: harnessError.message, level: 'error' });
    } else if (processResult.timedOut) {
      harnessError = new AgentHarnessError('ENGINE_TIMEOUT', `${adapter.id} did not finish within ${common.timeoutMs} ms; its process group was killed.`, { attempt });
    }
    rasp.exited({
      exit_code: processResult.exitCode,
      signal: processResult.signal,
      timed_out: processResult.timedOut,
      canceled: processResult.canceled,
      duration_ms: processResult.durationMs,
    });
    const after = await snapshotTree(runDir);
    await writeJsonAtomic(audit.fsAfter, after);
    fsDiff = diffSnapshots(before, after);
    await writeJsonAtomic(audit.fsDiff, fsDiff);
  } catch (error) {
    harnessError = toAgentHarnessError(error);
    rasp.diagnostic({ code: harnessError.code, message: harnessError.message, level: 'error' });
  } finally {
    if (prepared) {
      await prepared.cleanup();
      if (meta.trust) meta.trust.removed_at = nowIso();
    }
    await ownedServer?.close().catch(() => undefined);
    for (const file of [audit.fsBefore, audit.fsAfter]) {
      if (!fs.existsSync(file)) await writeJsonAtomic(file, { root: runDir, taken_at: nowIso(), excluded: ['.audit'], truncated: false, entries: [] });
    }
    if (!fs.existsSync(audit.fsDiff)) await writeJsonAtomic(audit.fsDiff, { root: runDir, created: [], modified: [], deleted: [] });
    const judged = judgeCompletion(rasp.events, { errorPatterns: adapter.errorPatterns });
    completion = harnessError && !processResult
      ? { state: 'failed', reason: harnessError.code }
      : { state: judged.state, reason: judged.reason };
    fcmp = translateRaspToFcmp(rasp.events, {
      runId: run.run_id,
      engine: adapter.id,
      attempt,
      seqStart: lastFcmpSeq(runDir, attempt),
      launch,
      errorPatterns: adapter.errorPatterns,
      replyText: launch === 'resume' ? request.message ?? null : null,
      sessionId: run.session_id,
    });
    writeJsonl(audit.fcmp, fcmp);
    writer.close();
    const endedAt = new Date();
    const sessionId = lastSessionId(rasp.events, run.session_id);
    meta = {
      ...meta,
      status: 'finished',
      timings: { started_at: meta.timings.started_at, ended_at: endedAt.toISOString(), duration_ms: endedAt.getTime() - startedAt.getTime() },
      exit: processResult ? { code: processResult.exitCode, signal: processResult.signal, timed_out: processResult.timedOut, canceled: processResult.canceled } : null,
      session_id: sessionId,
      completion,
      usage: lastUsage(rasp.events),
      error: harnessError ? { code: harnessError.code, message: harnessError.message } : null,
    };
    await writeJsonAtomic(audit.conformance, buildConformanceReport({
      runId: run.run_id, engine: adapter.id, attempt, launch, rasp: rasp.events, fcmp, completion, durationMs: meta.timings.duration_ms,
    }));
    await writeJsonAtomic(audit.meta, AttemptMetaSchema.parse(meta));
    run = await updateRun(paths.runRoot, run.run_id, {
      attempts: Math.max(run.attempts, attempt),
      session_id: sessionId,
      last_completion: completion.state,
      ...(resolvedScript.path ? { script: resolvedScript.path } : {}),
    }).catch(() => run);
  }

  const assistantMessages = collectAssistantMessages(fcmp);
  return {
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
    rasp: [...rasp.events],
    fcmp,
    assistantMessages,
    finalMessage: assistantMessages.at(-1) ?? null,
    toolCalls: collectToolCalls(rasp.events),
    fsDiff,
    usage: meta.usage,
    durationMs: meta.timings.duration_ms ?? 0,
    audit,
    error: harnessError,
  };
}
