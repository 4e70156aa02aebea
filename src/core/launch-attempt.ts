/**
 * Step 4 of an attempt, launch: the meta is written `running` (a later command seals it if this process dies), the
 * run directory's before-snapshot is listed, and the engine starts. The snapshot's content hashes are taken while
 * the engine runs, and fs-before is written once they are, off the spawn's path.
 */
import fs from 'node:fs';
import type { Writable } from 'node:stream';
import type { AcpClient, AcpClientOptions, AcpClientOutcome, StoredTurns } from '../engines/acp/client.js';
import type { EngineAdapter } from '../engines/engine.js';
import type { AgentHarnessError } from '../errors/index.js';
import { DEFAULT_AGENT_OPTIONS } from '../protocol/agent-option-defaults.js';
import type { RecordedRequest } from '../model/index.js';
import type { StreamName } from '../protocol/index.js';
import { openOwnFile } from '../runtime/own-file.js';
import { writeJsonAtomic } from '../runtime/atomic-write.js';
import { startSnapshot } from '../runtime/fs-snapshot.js';
import { DEFAULT_ATTEMPT_TIMEOUT_MS } from './attempt-request.js';
import { type McpStartupWatchdog, mcpTurnStartGraceMs, startMcpStartupWatchdog } from './mcp-startup-watchdog.js';
import { isModelCall } from './offered-skills.js';
import { runningMeta } from './attempt-meta.js';
import type { AttemptPlan, LaunchedAttempt, OpenedAttempt, ProvisionedAttempt } from './attempt-steps.js';
import { spawnEngine } from './spawn-engine.js';
import { startTerminalUiGuard, type TerminalUiGuard } from './terminal-ui-guard.js';

/**
 * The files a before-snapshot reads while the engine runs, at most: past that it reads none, and the after-snapshot
 * reads only what the engine changed (a run directory of 10,000 files must stay cheap).
 */
export const BEFORE_HASH_LIMIT = 2_000;

/**
 * Writes the running meta and lists the before-snapshot, at once: neither touches what the other reads. A harness
 * that dies in an attempt's first moments leaves no fs-before, as it leaves no fs-after (seal-interrupted.ts writes
 * neither). Then tells the caller the attempt is ready.
 */
async function writeRunning(plan: AttemptPlan, opened: OpenedAttempt, provisioned: ProvisionedAttempt) {
  const { audit, runDir } = opened;
  const meta = runningMeta(opened.initialMeta, opened.record);
  const [, snapshot] = await Promise.all([
    writeJsonAtomic(audit.meta, meta),
    startSnapshot(runDir, { hashLimit: BEFORE_HASH_LIMIT }),
  ]);
  plan.request.onReady?.({
    run: opened.run,
    attempt: opened.attempt,
    executable: provisioned.executable,
    argv: provisioned.argv,
    translateMode: plan.translateMode,
    skills: meta.skill_injection,
    configRoots: provisioned.configRoots,
    modelUrl: provisioned.modelUrl,
    io: plan.io,
    isolation: provisioned.isolation.record,
    engineVersion: {
      version: opened.record.engineVersion ?? null,
      checked: opened.record.engineVersionChecked ?? null,
      checkedVersions: opened.record.engineCheckedVersions ?? null,
    },
  });
  opened.clock.mark('fs_before');
  return snapshot;
}

/** The MCP startup watchdog of an attempt with stdio MCP servers (a diagnostic when it fires); null without. */
function startWatchdog(plan: AttemptPlan, opened: OpenedAttempt): McpStartupWatchdog | null {
  const { request } = plan;
  // The model's requests so far, once its server is up (it is by now, when there is one).
  let requests: (() => readonly RecordedRequest[]) | null = null;
  void opened.model.then(
    (model) => {
      requests = () => model.requests();
    },
    () => undefined,
  );
  return startMcpStartupWatchdog(
    request.agentOptions?.mcpServers,
    () => (requests?.() ?? []).some(isModelCall),
    guardDiagnostic(opened),
    // Read only for an attempt with MCP servers: a bad value fails those, not every attempt.
    request.agentOptions?.mcpServers?.length ? mcpTurnStartGraceMs(request.hostEnv ?? process.env) : undefined,
  );
}

/** Writes the running meta, lists the before-snapshot and starts the engine. */
export async function launchAttempt(
  plan: AttemptPlan,
  opened: OpenedAttempt,
  provisioned: ProvisionedAttempt,
): Promise<LaunchedAttempt> {
  const { request, io } = plan;
  const { audit, runDir, rasp } = opened;
  const snapshot = await writeRunning(plan, opened, provisioned);
  rasp.started({
    launch: plan.launch,
    argv: [provisioned.executable, ...provisioned.argv],
    cwd: runDir,
    pid: null,
    io,
  });
  const timeoutMs = request.timeoutMs ?? DEFAULT_ATTEMPT_TIMEOUT_MS;
  let acp: Promise<AcpClientOutcome> | null = null;
  // The ACP client (and the SDK under it) is loaded only by an attempt that speaks ACP.
  const acpClient = plan.transport === 'acp' ? await import('../engines/acp/client.js') : null;
  const mcpWatchdog = startWatchdog(plan, opened);
  const terminalUi = startTerminalGuard(plan, opened);
  const startClient = acpClient
    ? (stdin: Writable, stop: () => void): AcpClient => {
        const log = { fd: null as number | null };
        const client = acpClient.startAcpClient(acpClientOptions(plan, opened, stdin, stop, log));
        acp = client.done.finally(() => {
          if (log.fd !== null) fs.closeSync(log.fd);
        });
        return client;
      }
    : null;
  const engine = spawn(plan, opened, provisioned, timeoutMs, { mcpWatchdog, terminalUi }, startClient);
  if (mcpWatchdog) {
    // Stopped whichever way the engine ends (a rejection is the caller's to see, through `engine`).
    const stop = (): void => mcpWatchdog.stop();
    engine.then(stop, stop);
  }
  const before = snapshot.finish().then(async (listed) => {
    await writeJsonAtomic(audit.fsBefore, listed, { pretty: false });
    return listed;
  });
  // Awaited after the engine; a failure meanwhile must not be an unhandled rejection.
  before.catch(() => undefined);
  return {
    engine,
    before,
    timeoutMs,
    endedBy: () => mcpWatchdog?.error ?? terminalUi?.error ?? null,
    get acp() {
      return acp;
    },
  };
}

/**
 * The terminal UI guard of an attempt whose output goes to pipes (split io, not ACP): an engine drawing its UI there
 * is ended at once, with a diagnostic.
 */
function startTerminalGuard(plan: AttemptPlan, opened: OpenedAttempt): TerminalUiGuard | null {
  if (plan.io !== 'split' || plan.transport === 'acp') return null;
  return startTerminalUiGuard(plan.adapter.id, guardDiagnostic(opened));
}

/** What a guard that ends the engine records first: its error as the attempt's diagnostic, ahead of the exit. */
function guardDiagnostic(opened: OpenedAttempt): (error: AgentHarnessError) => void {
  return (error) => opened.rasp.diagnostic({ code: error.code, message: error.message, level: 'error' });
}

/** The harness's guards that can end an engine early. */
interface Guards {
  mcpWatchdog: McpStartupWatchdog | null;
  terminalUi: TerminalUiGuard | null;
}

/** Starts the engine with its command, its audit, its bounds (timeout, cancel, guards) and its ACP client. */
function spawn(
  plan: AttemptPlan,
  opened: OpenedAttempt,
  provisioned: ProvisionedAttempt,
  timeoutMs: number,
  { mcpWatchdog, terminalUi }: Guards,
  startClient: ((stdin: Writable, stop: () => void) => AcpClient) | null,
): LaunchedAttempt['engine'] {
  const { request, io } = plan;
  const { executable, argv, env, isolation } = provisioned;
  const signals = [request.signal, mcpWatchdog?.signal, terminalUi?.signal].filter((s) => s !== undefined);
  const signal = signals.length > 1 ? AbortSignal.any(signals) : signals[0];
  return spawnEngine({
    io,
    file: executable,
    args: argv,
    cwd: opened.runDir,
    env,
    timeoutMs,
    stdin: plan.adapter.stdin,
    audit: opened.audit,
    writer: opened.writer,
    rasp: opened.rasp,
    ...(plan.auditRedaction ? { redaction: plan.auditRedaction.chunks() } : {}),
    ...(signal ? { signal } : {}),
    ...(request.hurry ? { hurry: request.hurry } : {}),
    ...(request.onOutput || mcpWatchdog || terminalUi
      ? {
          onOutput: (stream: StreamName, chunk: Uint8Array) => {
            // In live mode the harness sees no model call: the engine's first output stands for its turn's start.
            if (stream === 'stdout' && plan.modelMode === 'live') mcpWatchdog?.output();
            terminalUi?.output(stream, chunk);
            request.onOutput?.(stream, chunk);
          },
        }
      : {}),
    ...(isolation.record.processes === 'pid-namespace' ? { isolation } : {}),
    ...(startClient ? { acp: startClient } : {}),
  });
}

/** The ACP client of this attempt: its prompt or message, the session to load, the policy, the audit of its side. */
function acpClientOptions(
  plan: AttemptPlan,
  opened: OpenedAttempt,
  stdin: Writable,
  stop: () => void,
  log: { fd: number | null },
): AcpClientOptions {
  const { request } = plan;
  const { audit, failures, rasp } = opened;
  return {
    stdin,
    cwd: opened.runDir,
    prompt: (plan.launch === 'resume' ? request.message : request.prompt) ?? '',
    resumeSessionId: plan.launch === 'resume' ? opened.run.session_id : null,
    mcpServers: request.agentOptions?.mcpServers ?? [],
    agentOptions: request.agentOptions ?? DEFAULT_AGENT_OPTIONS,
    ...(request.signal ? { signal: request.signal } : {}),
    onSent: (bytes) =>
      failures.attempt(audit.acpClient, () => {
        log.fd ??= openOwnFile(audit.acpClient, 'append');
        fs.writeSync(log.fd, bytes);
      }),
    onDiagnostic: (diagnostic) => rasp.diagnostic(diagnostic),
    onPrompt: (lines) => opened.acpParser?.promptSentAfterLine(lines),
    stop,
    ...(plan.adapter.acp?.staysAfterStdinCloses && plan.adapter.recoverSession
      ? { storedTurns: () => storedTurns(plan.adapter, opened) }
      : {}),
  };
}

/** The session the engine's own store holds for the run (its newest), and its turn ends; null when none. */
async function storedTurns(adapter: EngineAdapter, opened: OpenedAttempt): Promise<StoredTurns | null> {
  const events = await adapter.recoverSession!({
    runDir: opened.runDir,
    agentHome: opened.home.home,
    since: new Date(0),
  });
  let sessionId: string | null = null;
  let turnEnds = 0;
  for (const event of events) {
    if (event.type === 'engine.session') sessionId = event.session_id;
    else if (event.type === 'engine.turn.end') turnEnds += 1;
  }
  return sessionId === null ? null : { sessionId, turnEnds };
}
