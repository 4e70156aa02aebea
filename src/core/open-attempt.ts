/**
 * Step 2 of an attempt, open: the attempt begins. Its model server and its namespaces start first and boot while the
 * run store makes the run directory and reserves the attempt's number (the one concurrency step of an attempt); then
 * the audit recorder opens its files. From here on the attempt exists, and whatever fails is recorded in it.
 */
import { withMcpReadiness } from '../engines/mcp-readiness.js';
import { withStoreSession } from '../engines/store-session.js';
import path from 'node:path';
import type { NormalizeContext } from '../cassette/normalize.js';
import { listenModelServer } from '../model/server.js';
import type { FcmpEvent, IsolationMode, RaspEvent, RunIndexEntry } from '../protocol/index.js';
import { openIsolation, type AttemptIsolation } from '../runtime/isolation/attempt-isolation.js';
import { resolveIsolationMode } from '../runtime/isolation/mode.js';
import { createRun, reserveAttempt } from '../runtime/run-store.js';
import { writeOwnFileSync } from '../runtime/own-file.js';
import { runHome } from '../runtime/paths.js';
import { createRaspBuilder } from '../translate/rasp-builder.js';
import { createConformanceTally } from '../translate/conformance.js';
import { initialMeta } from './attempt-meta.js';
import { mcpForwardUrls, mcpServersCalled } from './mcp-reach.js';
import { AttemptResources } from './attempt-resources.js';
import { createRaspFacts } from './attempt-result.js';
import { attemptAuditPaths, AuditWriteFailures, clearAttemptPaths, fcmpSeqStart, RawLogWriter } from './audit-files.js';
import { EventSpool } from './event-spool.js';
import { createLiveFcmp } from './live-fcmp.js';
import type { AttemptModel, AttemptPlan, OpenedAttempt } from './attempt-steps.js';
import { StepClock } from './step-clock.js';

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
  const server = await listenModelServer({
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

/** The run (the request's, or a new one) and this attempt's number in it, reserved (the one concurrency step). */
async function runAndAttempt(plan: AttemptPlan): Promise<{ run: RunIndexEntry; attempt: number }> {
  const { request, adapter } = plan;
  const fromArgs = Boolean(request.passthrough?.length || request.rawArgs);
  const run =
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
  return { run, attempt: await reserveAttempt(run.run_dir) };
}

/** What a cassette normalizes out of what it records: this attempt's own paths and run id. */
function normalizeContextOf(
  plan: AttemptPlan,
  run: RunIndexEntry,
  attemptTmp: string,
  home: { home: string },
): NormalizeContext {
  const { paths } = plan.request;
  const runDir = run.run_dir;
  return {
    replacements: [
      [runDir, '<run-dir>'],
      [attemptTmp, '<tmp>'],
      [paths.tmpDir, '<tmp>'],
      [home.home, '<home>'],
      [paths.agentHome, '<home>'],
      [run.run_id, '<run-id>'],
    ],
    responsePaths: [
      [runDir, '<agent-harness:run-dir>'],
      [attemptTmp, '<agent-harness:tmp>'],
      [home.home, '<agent-harness:home>'],
      [paths.agentHome, '<agent-harness:home>'],
    ],
  };
}

/** What the recorder opens: the audit files, the RASP and FCMP spools, the live translation and what they say. */
type Recorder = Pick<
  OpenedAttempt,
  'audit' | 'failures' | 'writer' | 'raspSpool' | 'facts' | 'acpParser' | 'rasp' | 'fcmpSpool' | 'fcmp' | 'tally'
>;

/** The live RASP → FCMP translation of the attempt (the one normalized stream), written to fcmp.N.jsonl as it comes. */
function openLiveFcmp(
  plan: AttemptPlan,
  run: RunIndexEntry,
  attempt: number,
  audit: Recorder['audit'],
  failures: Recorder['failures'],
  model: Promise<AttemptModel>,
): Pick<Recorder, 'fcmpSpool' | 'fcmp' | 'tally'> {
  const { request, adapter } = plan;
  const tally = createConformanceTally();
  const fcmpSpool = new EventSpool<FcmpEvent>(audit.fcmp, failures, plan.eventMemoryBytes);
  const fcmp = createLiveFcmp({
    options: {
      runId: run.run_id,
      engine: adapter.id,
      attempt,
      seqStart: fcmpSeqStart(run.run_dir, attempt),
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
  return { fcmpSpool, fcmp, tally };
}

/** The attempt's audit recorder: its raw logs, its RASP and FCMP spools and builder, and what the events say. */
async function openRecorder(
  plan: AttemptPlan,
  run: RunIndexEntry,
  attempt: number,
  model: Promise<AttemptModel>,
): Promise<Recorder> {
  const { request, adapter } = plan;
  const runDir = run.run_dir;
  const audit = attemptAuditPaths(runDir, attempt);
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
  const acpParser =
    plan.transport === 'acp'
      ? (await import('../engines/acp/parse.js')).createAcpParser({ notice: adapter.acpNotice })
      : null;
  const live = openLiveFcmp(plan, run, attempt, audit, failures, model);
  let parser = acpParser ?? adapter.createParser();
  // A new session the engine names only at its end (copilot) is named from its store as soon as it is written there.
  const fromStore = adapter.sessionFromStore;
  if (fromStore && !acpParser && plan.launch === 'start' && plan.io === 'split') {
    const ctx = { runDir, agentHome: runHome(request.paths, run.run_id).home, since: new Date() };
    parser = withStoreSession(parser, () => fromStore(ctx));
  }
  const rasp = createRaspBuilder({
    runId: run.run_id,
    attempt,
    engine: adapter.id,
    parser: withMcpReadiness(parser),
    keepNoEvents: true,
    onEvent: (event) => {
      raspSpool.push(event);
      facts.push(event);
      live.fcmp.push(event);
    },
  });
  if (occupied.length > 0) {
    rasp.diagnostic({
      code: 'AUDIT_PATH_OCCUPIED',
      message: `Something already stood at this attempt's audit paths and was removed before it began: ${occupied.join(', ')} (the agent of an earlier attempt can write to .audit/).`,
      level: 'warning',
    });
  }
  return { audit, failures, writer, raspSpool, facts, acpParser, rasp, ...live };
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
  let reserved: { run: RunIndexEntry; attempt: number };
  try {
    reserved = await runAndAttempt(plan);
  } catch (error) {
    await resources.release();
    throw error;
  }
  const { run, attempt } = reserved;
  const runDir = run.run_dir;
  requestsLog = attemptAuditPaths(runDir, attempt).modelRequests;
  const attemptTmp = path.join(request.paths.tmpDir, `${run.handle}-${attempt}`);
  const home = runHome(request.paths, run.run_id);
  normalize = normalizeContextOf(plan, run, attemptTmp, home);
  const recorder = await openRecorder(plan, run, attempt, model);
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
    audit: recorder.audit,
    startedAt,
  });
  clock.mark('run_store');
  return {
    ...recorder,
    run,
    attempt,
    runDir,
    initialMeta: meta,
    record: {},
    startedAt,
    clock,
    resources,
    model,
    isolation,
    attemptTmp,
    home,
  };
}
