/**
 * Step 2 of an attempt, open: the attempt begins. Its model server and its namespaces start first and boot while the
 * run store makes the run directory and reserves the attempt's number (the one concurrency step of an attempt); then
 * the audit recorder opens its files. From here on the attempt exists, and whatever fails is recorded in it.
 */
import type { AcpParser } from '../acp/parse.js';
import { withMcpReadiness } from '../engines/mcp-readiness.js';
import path from 'node:path';
import type { CassetteSession } from '../cassette/session.js';
import type { NormalizeContext } from '../cassette/normalize.js';
import { startModelServer, type ModelServer, type RecordedRequest } from '../model/server.js';
import type { AttemptMeta, FcmpEvent, IsolationMode, RaspEvent, RunIndexEntry } from '../protocol/index.js';
import { openIsolation, type AttemptIsolation } from '../runtime/isolation/attempt-isolation.js';
import { resolveIsolationMode } from '../runtime/isolation/mode.js';
import { createRun, reserveAttempt } from '../runtime/run-store.js';
import { writeOwnFileSync } from '../runtime/own-file.js';
import { runHome, type RunHome } from '../runtime/paths.js';
import { createRaspBuilder, type RaspBuilder } from '../translate/rasp-builder.js';
import { createConformanceTally, type ConformanceTally } from '../translate/conformance.js';
import { initialMeta } from './attempt-meta.js';
import { mcpForwardUrls, mcpServersCalled } from './mcp-reach.js';
import { AttemptResources } from './attempt-resources.js';
import { createRaspFacts, type RaspFacts } from './attempt-result.js';
import {
  attemptAuditPaths,
  AuditWriteFailures,
  clearAttemptPaths,
  fcmpSeqStart,
  RawLogWriter,
  type AttemptAuditPaths,
} from './audit-files.js';
import { EventSpool } from './event-spool.js';
import { createLiveFcmp, type LiveFcmp } from './live-fcmp.js';
import type { AttemptPlan } from './prepare-attempt.js';
import { StepClock } from './step-clock.js';

/** The model server an attempt talks to: its own, a shared one (the fixtures'), or none (live mode). */
export interface AttemptModel {
  /** Its base URL; null in live mode. */
  url: string | null;
  /** The server this attempt started, else null. */
  owned: ModelServer | null;
  /** The model requests of this attempt so far. */
  requests(): readonly RecordedRequest[];
  /** The cassette the server records or replays (record and replay modes), else null. */
  cassette: CassetteSession | null;
}

/** An attempt that has begun: its run, its number, its audit recorder and what it holds. */
export interface OpenedAttempt {
  run: RunIndexEntry;
  /** Over ACP: the parser of the engine's stdout, told by the client where its prompt was sent; else null. */
  acpParser: AcpParser | null;
  attempt: number;
  runDir: string;
  audit: AttemptAuditPaths;
  /** The audit meta as it is filled in; written `running` before the engine starts and `finished` when sealed. */
  meta: AttemptMeta;
  startedAt: Date;
  clock: StepClock;
  /** Failed audit writes, recorded per file instead of thrown. */
  failures: AuditWriteFailures;
  writer: RawLogWriter;
  /** The RASP events as they are built, written as they come. */
  raspSpool: EventSpool<RaspEvent>;
  rasp: RaspBuilder;
  /** The FCMP events as they are translated, written as they come (`fcmp.N.jsonl`). */
  fcmpSpool: EventSpool<FcmpEvent>;
  /** The live RASP → FCMP translation (the attempt's one normalized stream); sealed by the seal step. */
  fcmp: LiveFcmp;
  /** What the RASP events said so far (session, usage, offered skills). */
  facts: RaspFacts;
  tally: ConformanceTally;
  /** Everything to give back when the attempt ends. */
  resources: AttemptResources;
  /** The model server, once it listens. */
  model: Promise<AttemptModel>;
  /** The namespaces, opening (their init boots meanwhile); rejects with the reason the attempt fails. */
  isolation: Promise<AttemptIsolation>;
  /** The attempt's own TMPDIR, removed when it ends. */
  attemptTmp: string;
  /** The run's own HOME, npm prefix and uv directories (under the managed home; kept with the run). */
  home: RunHome;
}

/**
 * Starts the model server the plan asks for (or takes the shared one); `requestsLog` is where it logs requests,
 * `normalize` what a cassette normalizes (the attempt's paths, once they exist).
 */
async function startModel(
  plan: AttemptPlan,
  requestsLog: () => string | null,
  normalize: () => NormalizeContext,
): Promise<AttemptModel> {
  const shared = plan.request.modelServer;
  if (plan.modelMode === 'live') return { url: null, owned: null, requests: () => [], cassette: null };
  // A cassette needs the attempt's own server: a shared one (the fixtures') is used as it is.
  if (shared && !plan.cassette) {
    // A shared server logs every attempt of a test; this attempt's requests are those after this.
    const before = shared.requests?.length ?? 0;
    return { url: shared.url, owned: null, requests: () => shared.requests?.slice(before) ?? [], cassette: null };
  }
  // The cassette code is loaded only by the attempts that record or replay.
  const given = plan.cassette;
  const cassette = given
    ? (await import('../cassette/session.js')).openCassette({
        mode: given.mode,
        file: given.file,
        ...(given.mode === 'replay' ? { cassette: given.cassette } : {}),
        ...(given.mode === 'record' ? { upstream: given.upstream } : {}),
        strict: given.strict,
        pace: given.pace,
        ...(given.fork ? { fork: given.fork } : {}),
        hostEnv: plan.hostEnv,
        engine: plan.adapter.id,
        context: normalize,
        briefMisses: true,
      })
    : null;
  const server = await startModelServer({
    ...(plan.script ? { script: plan.script } : {}),
    tools: [plan.adapter.tools],
    logFile: requestsLog,
    ...(plan.auditRedaction ? { redactLog: plan.auditRedaction.text } : {}),
    ...(cassette ? { intercept: cassette.intercept } : {}),
  });
  return { url: server.url, owned: server, requests: () => server.requests, cassette };
}

/** Opens the attempt's namespaces once its model URL is known, their init started at once for split streams. */
async function startIsolation(plan: AttemptPlan, model: Promise<AttemptModel>): Promise<AttemptIsolation> {
  const early = plan.request.earlyInit ?? null;
  let url: string | null;
  let mode: IsolationMode;
  try {
    url = (await model).url;
    // A bad AGENT_HARNESS_ISOLATION (isolationMode null) throws CONFIG_INVALID here, failing the attempt.
    mode = plan.isolationMode ?? resolveIsolationMode(undefined, plan.hostEnv);
  } catch (error) {
    early?.discard();
    throw error;
  }
  return openIsolation({
    // An init started before the attempt (the CLI's) serves only split streams; openIsolation kills one it cannot use.
    early,
    mode,
    modelUrl: url,
    // HTTP MCP servers on the host's loopback are forwarded into the namespace like the model server.
    forwardUrls: mcpForwardUrls(plan.request.agentOptions?.mcpServers),
    ...(plan.namespaceSupport ? { support: plan.namespaceSupport } : {}),
    // A PTY or `script` starts the init in its own terminal.
    ...(plan.io === 'split' ? { prestart: plan.initStdin } : {}),
    // The agent's filesystem is contained too (provision sends the mount plan).
    filesystem: true,
  });
}

/** Begins the attempt; throws only when the run store fails, before the attempt exists (nothing is left running). */
export async function openAttempt(plan: AttemptPlan): Promise<OpenedAttempt> {
  const { request, adapter } = plan;
  const clock = new StepClock();
  const resources = new AttemptResources();
  let requestsLog: string | null = null;
  let normalize: NormalizeContext = { replacements: [] };
  const model = startModel(
    plan,
    () => requestsLog,
    () => normalize,
  );
  const isolation = startIsolation(plan, model);
  // Each is awaited where a step uses it, and a failure is reported there, as a failed attempt.
  model.catch(() => undefined);
  isolation.catch(() => undefined);
  resources.add(() => model.then((started) => started.owned?.close()));
  resources.add(() => isolation.then((opened) => opened.close()));
  let run: RunIndexEntry;
  let attempt: number;
  try {
    const fromArgs = Boolean(request.passthrough?.length || request.rawArgs);
    run =
      request.run ??
      (await createRun(request.paths.runRoot, {
        engine: adapter.id,
        translateMode: plan.translateMode,
        modelMode: plan.modelMode,
        script: plan.script ?? null,
        startArgs: fromArgs ? (request.passthrough ?? []) : null,
        prompt: fromArgs ? null : (request.prompt ?? null),
        label: request.label ?? null,
        ...(request.runDir ? { runDir: request.runDir } : {}),
      }));
    attempt = await reserveAttempt(run.run_dir);
  } catch (error) {
    await resources.release();
    throw error;
  }
  const runDir = run.run_dir;
  const audit = attemptAuditPaths(runDir, attempt);
  requestsLog = audit.modelRequests;
  const attemptTmp = path.join(request.paths.tmpDir, `${run.handle}-${attempt}`);
  const home = runHome(request.paths, run.run_id);
  normalize = {
    replacements: [
      [runDir, '<run-dir>'],
      [attemptTmp, '<tmp>'],
      [request.paths.tmpDir, '<tmp>'],
      [home.home, '<home>'],
      [request.paths.agentHome, '<home>'],
      [run.run_id, '<run-id>'],
    ],
    responsePaths: [
      [runDir, '<agent-harness:run-dir>'],
      [attemptTmp, '<agent-harness:tmp>'],
      [home.home, '<agent-harness:home>'],
      [request.paths.agentHome, '<agent-harness:home>'],
    ],
  };
  const failures = new AuditWriteFailures();
  // What the agent may have put at this attempt's audit paths (a FIFO would hang the harness) is removed first.
  const occupied = clearAttemptPaths(runDir, attempt);
  const writer = new RawLogWriter(audit, failures);
  writer.touch(plan.io === 'split' ? ['stdout', 'stderr'] : ['pty', 'timing']);
  // The events are written as they are built and kept in memory only up to a budget: a long attempt's memory is flat.
  const raspSpool = new EventSpool<RaspEvent>(audit.rasp, failures, plan.eventMemoryBytes);
  const facts = createRaspFacts(request.run?.session_id ?? null);
  failures.attempt(audit.stdin, () =>
    writeOwnFileSync(audit.stdin, plan.launch === 'resume' ? `${request.message}\n` : ''),
  );
  const acpParser = plan.transport === 'acp' ? (await import('../acp/parse.js')).createAcpParser() : null;
  const tally = createConformanceTally();
  const fcmpSpool = new EventSpool<FcmpEvent>(audit.fcmp, failures, plan.eventMemoryBytes);
  const fcmp = createLiveFcmp({
    options: {
      runId: run.run_id,
      engine: adapter.id,
      attempt,
      seqStart: fcmpSeqStart(runDir, attempt),
      launch: plan.launch,
      errorPatterns: adapter.errorPatterns,
      // A call whose argv the user wrote may start no session (`agent-harness codex --version`): not a failure.
      expectSession: plan.launch === 'resume' || (!request.rawArgs && (request.passthrough?.length ?? 0) === 0),
      mcpServersUsed: mcpServersCalled(plan.script),
      replyText: plan.launch === 'resume' ? (request.message ?? null) : null,
      sessionId: run.session_id,
    },
    spool: fcmpSpool,
    tally,
    requests: model.then((started) => started.requests),
    ...(request.onRaspEvent ? { onRaspEvent: request.onRaspEvent } : {}),
    ...(request.onFcmpEvent ? { onEvent: request.onFcmpEvent } : {}),
  });
  const rasp = createRaspBuilder({
    runId: run.run_id,
    attempt,
    engine: adapter.id,
    parser: withMcpReadiness(acpParser ?? adapter.createParser()),
    keepNoEvents: true,
    onEvent: (event) => {
      raspSpool.push(event);
      facts.push(event);
      fcmp.push(event);
    },
  });
  if (occupied.length > 0) {
    rasp.diagnostic({
      code: 'AUDIT_PATH_OCCUPIED',
      message: `Something already stood at this attempt's audit paths and was removed before it began: ${occupied.join(', ')} (the agent of an earlier attempt can write to .audit/).`,
      level: 'warning',
    });
  }
  const startedAt = new Date();
  const meta = initialMeta({
    run,
    attempt,
    engine: adapter.id,
    executableName: adapter.executableName,
    skillRoot: adapter.skillRoot,
    launch: plan.launch,
    translateMode: plan.translateMode,
    modelMode: plan.modelMode,
    scriptPath: plan.scriptPath,
    io: plan.io,
    transport: plan.transport,
    paths: request.paths,
    audit,
    startedAt,
  });
  clock.mark('run_store');
  return {
    run,
    acpParser,
    attempt,
    runDir,
    audit,
    meta,
    startedAt,
    clock,
    failures,
    writer,
    raspSpool,
    rasp,
    facts,
    fcmpSpool,
    fcmp,
    tally,
    resources,
    model,
    isolation,
    attemptTmp,
    home,
  };
}
