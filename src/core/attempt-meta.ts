/**
 * The audit meta of an attempt, assembled here and nowhere else: as the attempt opens ({@link initialMeta}), as the
 * engine starts ({@link runningMeta}) and as it is sealed ({@link finishedMeta}), each from the opening meta and what
 * the later steps recorded (`AttemptRecord`), never written in place by the steps.
 */
import path from 'node:path';
import type { AttemptMeta, EngineId, ModelMode, RunIndexEntry, TranslateMode } from '../protocol/index.js';
import { META_VERSION } from '../protocol/versions.js';
import { describeCurrentOwner } from '../runtime/lease.js';
import type { HarnessPaths } from '../runtime/paths.js';
import type { AttemptTransport, IoMode } from './attempt-request.js';
import type { AttemptAuditPaths } from './audit-files.js';
import type { AttemptRecord } from './attempt-steps.js';

/** What {@link initialMeta} needs. */
export interface InitialMetaInput {
  run: RunIndexEntry;
  attempt: number;
  engine: EngineId;
  executableName: string;
  skillRoot: string;
  launch: 'start' | 'resume';
  translateMode: TranslateMode;
  modelMode: ModelMode;
  scriptPath: string | null;
  io: IoMode;
  /** How the harness talks to the engine (`acp`: the ACP client's file is listed). */
  transport: AttemptTransport;
  paths: HarnessPaths;
  audit: AttemptAuditPaths;
  startedAt: Date;
}

/** The meta of a starting attempt. */
export function initialMeta(input: InitialMetaInput): AttemptMeta {
  const { run, attempt, launch, translateMode, modelMode, io, paths, audit, startedAt } = input;
  const runDir = run.run_dir;
  return {
    version: META_VERSION,
    run_id: run.run_id,
    handle: run.handle,
    attempt,
    engine: input.engine,
    launch,
    ...(input.transport === 'acp' ? { transport: 'acp' as const } : {}),
    status: 'running',
    translate_mode: translateMode,
    model: { mode: modelMode, base_url: null, script: input.scriptPath },
    command: { executable: input.executableName, argv: [], cwd: runDir, io },
    env: {},
    timings: { started_at: startedAt.toISOString(), ended_at: null, duration_ms: null },
    exit: null,
    session_id: run.session_id,
    completion: null,
    usage: null,
    skill_injection: {
      source_roots: paths.skillRoots,
      target_root: path.join(runDir, input.skillRoot),
      skill_count: 0,
      skills: [],
    },
    config_injection: null,
    trust: null,
    error: null,
    files: Object.fromEntries(
      Object.entries(audit)
        .filter(([key]) => key !== 'dir' && (key !== 'acpClient' || input.transport === 'acp'))
        .map(([key, file]) => [key, path.relative(runDir, file)]),
    ),
    // Who runs the attempt: a later command seals a `running` meta whose owner is gone as interrupted.
    owner: describeCurrentOwner(),
  };
}

/** Only the keys whose value is known (an optional meta field a step never recorded stays absent). */
function known<T extends object>(fields: T): Partial<T> {
  return Object.fromEntries(Object.entries(fields).filter(([, value]) => value !== undefined)) as Partial<T>;
}

/** The meta of an attempt whose engine starts: the opening meta with what provision recorded. */
export function runningMeta(initial: AttemptMeta, record: AttemptRecord): AttemptMeta {
  const trust =
    record.trust === undefined
      ? {}
      : { trust: record.trust && { ...record.trust, removed_at: record.trustRemovedAt ?? record.trust.removed_at } };
  return {
    ...initial,
    model: {
      ...initial.model,
      ...known({ base_url: record.modelBaseUrl, cassette: record.cassette }),
    },
    ...known({
      command: record.command,
      env: record.env,
      skill_injection: record.skillInjection,
      config_injection: record.configInjection,
      engine_version: record.engineVersion,
      engine_version_checked: record.engineVersionChecked,
      engine_checked_versions: record.engineCheckedVersions,
      workspace: record.workspace,
      resume_flags: record.resumeFlags,
      agent_options: record.agentOptions,
      isolation: record.isolation,
    }),
    ...trust,
    files: record.gitDiff ? { ...initial.files, gitDiff: record.gitDiff } : initial.files,
  };
}

/** What the seal step adds to the meta: how the attempt ended. */
export interface SealedFields {
  endedAt: Date;
  startedAt: Date;
  exit: AttemptMeta['exit'];
  sessionId: string | null;
  completion: NonNullable<AttemptMeta['completion']>;
  usage: AttemptMeta['usage'];
  error: { code: string; message: string } | null;
  /** The skills the engine offered the model (null in live mode, where the harness sees no request). */
  offered: string[] | null;
  steps: Record<string, number>;
}

/** The meta of a sealed attempt (status `finished`). */
export function finishedMeta(initial: AttemptMeta, record: AttemptRecord, sealed: SealedFields): AttemptMeta {
  const running = runningMeta(initial, record);
  return {
    ...running,
    status: 'finished',
    timings: {
      started_at: initial.timings.started_at,
      ended_at: sealed.endedAt.toISOString(),
      duration_ms: sealed.endedAt.getTime() - sealed.startedAt.getTime(),
      steps: sealed.steps,
    },
    exit: sealed.exit,
    session_id: sealed.sessionId,
    completion: sealed.completion,
    usage: sealed.usage,
    error: sealed.error,
    skill_injection:
      sealed.offered === null ? running.skill_injection : { ...running.skill_injection, offered: sealed.offered },
  };
}
