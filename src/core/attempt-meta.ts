/**
 * The audit meta of an attempt as first written (status `running`), before anything can fail.
 */
import path from 'node:path';
import type { AttemptMeta, EngineId, ModelMode, RunIndexEntry, TranslateMode } from '../protocol/index.js';
import { META_VERSION } from '../protocol/versions.js';
import { describeCurrentOwner } from '../runtime/lease.js';
import type { HarnessPaths } from '../runtime/paths.js';
import type { AttemptTransport, IoMode } from './attempt-request.js';
import type { AttemptAuditPaths } from './audit-files.js';

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
