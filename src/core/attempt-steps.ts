/**
 * The attempt's steps side by side: the output of each step (prepare → open → provision → launch → observe → seal),
 * which the later steps take as input. The steps import these types from here, never from each other, so a step's
 * file holds only its work.
 */
import type { AcpClientOutcome } from '../engines/acp/client.js';
import type { AcpParser } from '../engines/acp/parse.js';
import type { CassetteFork, CassettePlan } from '../cassette/mode.js';
import type { CassetteSession } from '../cassette/session.js';
import type { EngineAdapter } from '../engines/engine.js';
import type { ModelScript } from '../model/script.js';
import type { ModelServer, RecordedRequest } from '../model/server.js';
import type {
  AttemptMeta,
  FcmpEvent,
  FsDiff,
  FsSnapshot,
  IsolationMode,
  ModelMode,
  RaspEvent,
  RunIndexEntry,
  TranslateMode,
} from '../protocol/index.js';
import type { AttemptIsolation } from '../runtime/isolation/attempt-isolation.js';
import type { HostPathRule } from '../runtime/isolation/host-path-rule.js';
import type { ExposeRequest } from '../runtime/isolation/mount-plan.js';
import type { NamespaceSupport } from '../runtime/isolation/probe.js';
import type { RunHome } from '../runtime/paths.js';
import type { ProcessResult } from '../runtime/process-result.js';
import type { ConformanceTally } from '../translate/conformance.js';
import type { RaspBuilder } from '../translate/rasp-builder.js';
import type { AgentHarnessError } from '../errors/index.js';
import type { AttemptRequest, AttemptTransport, IoMode } from './attempt-request.js';
import type { AttemptResources } from './attempt-resources.js';
import type { RaspFacts } from './attempt-result.js';
import type { AttemptAuditPaths, AuditWriteFailures, RawLogWriter } from './audit-files.js';
import type { AuditRedaction } from './audit-redaction.js';
import type { EventSpool } from './event-spool.js';
import type { LiveFcmp } from './live-fcmp.js';
import type { StepClock } from './step-clock.js';

/** What an attempt will be, decided from its request: the output of prepare. */
export interface AttemptPlan {
  request: AttemptRequest;
  adapter: EngineAdapter;
  launch: 'start' | 'resume';
  /** The engine's resume arguments (resume only). */
  resumeArgs: NonNullable<EngineAdapter['buildResumeArgs']> | null;
  translateMode: TranslateMode;
  modelMode: ModelMode;
  /** The cassette recorded or replayed (record and replay modes), with its strictness and pace; else null. */
  cassette: (CassettePlan & { strict: boolean; pace: number; fork?: CassetteFork }) | null;
  /** The scripted model's script (scripted mode; undefined: the default script), and the file it came from. */
  script: ModelScript | undefined;
  scriptPath: string | null;
  io: IoMode;
  /** Null when the mode given is not valid: the attempt then fails where its isolation is opened (CONFIG_INVALID). */
  isolationMode: IsolationMode | null;
  /** The namespace probe, started here so that it runs while the run directory is made. */
  namespaceSupport: Promise<NamespaceSupport> | undefined;
  eventMemoryBytes: number;
  /** Host paths exposed to the agent on purpose, resolved and checked. */
  expose: ExposeRequest[];
  /** The host path rule of this attempt (its run root, the HOME it was started with): every host path in its plan. */
  hostPathRule: HostPathRule;
  /** What the engine's stdin is before it starts (`live`: the ACP client writes to it). */
  initStdin: 'ignore' | { text: string } | 'live';
  /** How the harness talks to the engine. */
  transport: AttemptTransport;
  hostEnv: NodeJS.ProcessEnv;
  /** The secrets redacted out of the audit (an attempt that hands a real key out), or null: nothing to redact. */
  auditRedaction: AuditRedaction | null;
  /** The engine's executable as found (before the run directory is made: a missing engine is a usage mistake). */
  executable: string;
}

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

/**
 * What the steps after open learn for the audit meta, each field set once by the step that learns it (provision,
 * observe, and the release of the engine's config). The meta is assembled from the opening meta and this record
 * (attempt-meta.ts): `running` by launch, `finished` by seal. A step that fails part way leaves what it learnt.
 */
export interface AttemptRecord {
  modelBaseUrl?: string | null;
  isolation?: AttemptMeta['isolation'];
  workspace?: AttemptMeta['workspace'];
  skillInjection?: AttemptMeta['skill_injection'];
  configInjection?: AttemptMeta['config_injection'];
  trust?: AttemptMeta['trust'];
  /** When the engine's trust entry was removed again (the attempt's release). */
  trustRemovedAt?: string;
  agentOptions?: AttemptMeta['agent_options'];
  engineVersion?: AttemptMeta['engine_version'];
  engineVersionChecked?: AttemptMeta['engine_version_checked'];
  engineCheckedVersions?: AttemptMeta['engine_checked_versions'];
  env?: AttemptMeta['env'];
  command?: AttemptMeta['command'];
  resumeFlags?: AttemptMeta['resume_flags'];
  cassette?: AttemptMeta['model']['cassette'];
  /** The git patch's path relative to the run directory, once written. */
  gitDiff?: string;
}

/** An attempt that has begun, the output of open: its run, its number, its audit recorder and what it holds. */
export interface OpenedAttempt {
  run: RunIndexEntry;
  /** Over ACP: the parser of the engine's stdout, told by the client where its prompt was sent; else null. */
  acpParser: AcpParser | null;
  attempt: number;
  runDir: string;
  audit: AttemptAuditPaths;
  /** The audit meta as the attempt opened (status `running`, nothing provisioned yet). */
  initialMeta: AttemptMeta;
  /** What the later steps learn for the meta. */
  record: AttemptRecord;
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
  /** The live RASP → FCMP translation (the attempt's one normalized stream); ended by the seal step. */
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

/** The engine command, ready to start: the output of provision. */
export interface ProvisionedAttempt {
  executable: string;
  argv: string[];
  env: Record<string, string>;
  /** The managed config roots the engine reads (HOME, XDG dirs, TMPDIR, the engine's own). */
  configRoots: string[];
  modelUrl: string | null;
  isolation: AttemptIsolation;
}

/** A running engine: the output of launch. */
export interface LaunchedAttempt {
  /** Resolves when the engine has exited (or could not start); never rejects. */
  engine: Promise<ProcessResult>;
  /** fs-before, hashed and written; rejects when it could not be written. */
  before: Promise<FsSnapshot>;
  timeoutMs: number;
  /** Over ACP: how the client's conversation ended (settles once the engine is done); null natively. */
  acp: Promise<AcpClientOutcome> | null;
  /**
   * The error of the harness's guard that ended the engine, or null: the bound on a turn that never starts while stdio
   * MCP servers start (mcp-startup-watchdog.ts), or on a terminal UI drawn into a pipe (terminal-ui-guard.ts).
   */
  endedBy(): AgentHarnessError | null;
}

/** What happened in an attempt: the output of observe, and what the seal step judges. */
export interface AttemptOutcome {
  /** The engine's exit; null when it never started (the attempt failed before). */
  process: ProcessResult | null;
  fsDiff: FsDiff | null;
  /** The harness's own failure, if any (the engine's failures are judged from its events). */
  error: AgentHarnessError | null;
  /** fs-before, while it is still being written (awaited before sealing). */
  before: Promise<unknown> | null;
}
