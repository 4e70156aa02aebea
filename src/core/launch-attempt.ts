/**
 * Step 4 of an attempt, launch: the meta is written `running` (a later command seals it if this process dies), the
 * run directory's before-snapshot is listed, and the engine starts. The snapshot's content hashes are taken while
 * the engine runs, and fs-before is written once they are, off the spawn's path.
 */
import fs from 'node:fs';
import type { Writable } from 'node:stream';
import type { AcpClientOptions, AcpClientOutcome } from '../acp/client.js';
import { DEFAULT_AGENT_OPTIONS } from '../protocol/agent-option-defaults.js';
import type { RecordedRequest } from '../model/index.js';
import type { FsSnapshot, StreamName } from '../protocol/index.js';
import { openOwnFile } from '../runtime/own-file.js';
import { writeJsonAtomic } from '../runtime/atomic-write.js';
import { startSnapshot } from '../runtime/fs-snapshot.js';
import type { ProcessResult } from '../runtime/process-result.js';
import { DEFAULT_ATTEMPT_TIMEOUT_MS } from './attempt-request.js';
import { type McpStartupWatchdog, mcpTurnStartGraceMs, startMcpStartupWatchdog } from './mcp-startup-watchdog.js';
import { isModelCall } from './offered-skills.js';
import type { OpenedAttempt } from './open-attempt.js';
import type { AttemptPlan } from './prepare-attempt.js';
import type { ProvisionedAttempt } from './provision-attempt.js';
import { spawnEngine } from './spawn-engine.js';

/**
 * The files a before-snapshot reads while the engine runs, at most: past that it reads none, and the after-snapshot
 * reads only what the engine changed (a run directory of 10,000 files must stay cheap).
 */
export const BEFORE_HASH_LIMIT = 2_000;

/** A running engine: the output of {@link launchAttempt}. */
export interface LaunchedAttempt {
  /** Resolves when the engine has exited (or could not start); never rejects. */
  engine: Promise<ProcessResult>;
  /** fs-before, hashed and written; rejects when it could not be written. */
  before: Promise<FsSnapshot>;
  timeoutMs: number;
  /** Over ACP: how the client's conversation ended (settles once the engine is done); null natively. */
  acp: Promise<AcpClientOutcome> | null;
  /** The bound on a turn that never starts while stdio MCP servers start (mcp-startup-watchdog.ts); null without. */
  mcpWatchdog: McpStartupWatchdog | null;
}

/** Writes the running meta, lists the before-snapshot and starts the engine. */
export async function launchAttempt(
  plan: AttemptPlan,
  opened: OpenedAttempt,
  provisioned: ProvisionedAttempt,
): Promise<LaunchedAttempt> {
  const { request, io, adapter } = plan;
  const { audit, runDir, meta, rasp } = opened;
  const { executable, argv, env, isolation } = provisioned;
  // The meta and the before-snapshot's listing at once: neither touches what the other reads. A harness that dies
  // in an attempt's first moments leaves no fs-before, as it leaves no fs-after (seal-interrupted.ts writes neither).
  const [, snapshot] = await Promise.all([
    writeJsonAtomic(audit.meta, meta),
    startSnapshot(runDir, { hashLimit: BEFORE_HASH_LIMIT }),
  ]);
  request.onReady?.({
    run: opened.run,
    attempt: opened.attempt,
    executable,
    argv,
    translateMode: plan.translateMode,
    skills: meta.skill_injection,
    configRoots: provisioned.configRoots,
    modelUrl: provisioned.modelUrl,
    io,
    isolation: isolation.record,
    engineVersion: {
      version: meta.engine_version ?? null,
      checked: meta.engine_version_checked ?? null,
      checkedVersions: meta.engine_checked_versions ?? null,
    },
  });
  opened.clock.mark('fs_before');

  rasp.started({ launch: plan.launch, argv: [executable, ...argv], cwd: runDir, pid: null, io });
  const timeoutMs = request.timeoutMs ?? DEFAULT_ATTEMPT_TIMEOUT_MS;
  let acp: Promise<AcpClientOutcome> | null = null;
  // The ACP client (and the SDK under it) is loaded only by an attempt that speaks ACP.
  const acpClient = plan.transport === 'acp' ? await import('../acp/client.js') : null;
  // The model's requests so far, once its server is up (it is by now, when there is one).
  let requests: (() => readonly RecordedRequest[]) | null = null;
  void opened.model.then(
    (model) => {
      requests = () => model.requests();
    },
    () => undefined,
  );
  const mcpWatchdog = startMcpStartupWatchdog(
    request.agentOptions?.mcpServers,
    () => (requests?.() ?? []).some(isModelCall),
    (error) => rasp.diagnostic({ code: 'MCP_SERVER_STARTUP_STALLED', message: error.message, level: 'error' }),
    // Read only for an attempt with MCP servers: a bad value fails those, not every attempt.
    request.agentOptions?.mcpServers?.length ? mcpTurnStartGraceMs(request.hostEnv ?? process.env) : undefined,
  );
  const signal =
    mcpWatchdog && request.signal
      ? AbortSignal.any([request.signal, mcpWatchdog.signal])
      : (mcpWatchdog?.signal ?? request.signal);
  const engine = spawnEngine({
    io,
    file: executable,
    args: argv,
    cwd: runDir,
    env,
    timeoutMs,
    stdin: adapter.stdin,
    audit,
    writer: opened.writer,
    rasp,
    ...(plan.auditRedaction ? { redaction: plan.auditRedaction.chunks() } : {}),
    ...(signal ? { signal } : {}),
    ...(request.hurry ? { hurry: request.hurry } : {}),
    ...(request.onOutput || mcpWatchdog
      ? {
          onOutput: (stream: StreamName, chunk: Uint8Array) => {
            // In live mode the harness sees no model call: the engine's first output stands for its turn's start.
            if (stream === 'stdout' && plan.modelMode === 'live') mcpWatchdog?.output();
            request.onOutput?.(stream, chunk);
          },
        }
      : {}),
    ...(isolation.record.processes === 'pid-namespace' ? { isolation } : {}),
    ...(acpClient
      ? {
          acp: (stdin: Writable, stop: () => void) => {
            const log = { fd: null as number | null };
            const client = acpClient.startAcpClient(acpClientOptions(plan, opened, stdin, stop, log));
            acp = client.done.finally(() => {
              if (log.fd !== null) fs.closeSync(log.fd);
            });
            return client;
          },
        }
      : {}),
  });
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
    mcpWatchdog,
    get acp() {
      return acp;
    },
  };
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
  };
}
