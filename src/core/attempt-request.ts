/**
 * The input of one attempt ({@link AttemptRequest}) and what is known just before the engine starts.
 */
import type { CassetteForkInput } from '../cassette/mode.js';
import type { ModelScript, ModelServer } from '../model/index.js';
import type {
  AgentOptions,
  EngineId,
  IsolationMode,
  IsolationRecord,
  ModelMode,
  FcmpEvent,
  RaspEvent,
  RunIndexEntry,
  SkillInjection,
  StreamName,
  TranslateMode,
} from '../protocol/index.js';
import type { EarlyInit } from '../runtime/isolation/early-init.js';
import type { ExposeEntry } from '../runtime/isolation/mount-plan.js';
import type { HarnessPaths } from '../runtime/paths.js';
import type { WorkspaceSeed } from './workspace.js';

/** Default attempt timeout: 10 minutes. */
export const DEFAULT_ATTEMPT_TIMEOUT_MS = 600_000;

/** How the harness talks to the engine: its headless command line, or ACP. */
export type AttemptTransport = 'native' | 'acp';

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
  /** What a new run's directory starts with (start of a new run only): template, files, git. */
  workspace?: WorkspaceSeed;
  /** Start the run in this existing directory instead of a new one under the run root (a provider's `cwd`). */
  runDir?: string;
  /** Who starts the run (a test's full name), recorded in run.json and listed by `runs`. */
  label?: string;
  /** Inject only these skills (by name) instead of every skill under the skill roots. */
  onlySkills?: readonly string[];
  /** Prompt for the engine's default headless command (start without passthrough args). */
  prompt?: string | null;
  /**
   * `passthrough` is the engine's whole command line, even when empty (the direct form `agent-harness codex` opens
   * codex itself); otherwise an empty passthrough means the engine's default headless command with `prompt`.
   */
  rawArgs?: boolean;
  /** Engine arguments passed verbatim (start). */
  passthrough?: readonly string[];
  /** The next user message (resume). */
  message?: string;
  /** Translate view recorded in the run (default 0). */
  translateMode?: TranslateMode;
  /**
   * Model mode (default `scripted`). `record`, `replay` and `auto` need {@link AttemptRequest.cassette}; `auto`
   * replays when the cassette exists and records when it does not (see docs/cassettes.md).
   */
  modelMode?: ModelMode | 'auto';
  /** The cassette of a `record`, `replay` or `auto` attempt. */
  cassette?: AttemptCassette;
  /** Script for the scripted model: a parsed script, a path to a JSON file, or a run's recorded inline script. */
  script?: ModelScript | string | RunIndexEntry['script'];
  /** Use this model server instead of starting one (fixtures share one per test). */
  modelServer?: (Pick<ModelServer, 'url'> & Partial<Pick<ModelServer, 'requests' | 'script'>>) | null;
  /** Terminal wiring (default `split`). */
  io?: IoMode;
  /** Attempt timeout in ms. */
  timeoutMs?: number;
  /** Cancels the attempt (the process group is killed). */
  signal?: AbortSignal;
  /**
   * Permission mode, tool lists, system prompt, turn limit and MCP servers, mapped onto the engine's own controls
   * (the providers set them). Absent: the engine's headless defaults. What the engine cannot do is
   * ENGINE_CAPABILITY_UNAVAILABLE before anything runs.
   */
  agentOptions?: AgentOptions;
  /**
   * How the harness talks to the engine (default `native`: its headless command line and output). `acp`: the
   * engine's ACP mode (`EngineAdapter.acp`) with the harness as the ACP client over a live stdin (docs/acp.md); an
   * engine without one is ENGINE_CAPABILITY_UNAVAILABLE before anything runs. Split io only.
   */
  transport?: AttemptTransport;
  /** Aborted after `signal` (a second Ctrl-C): the engine is killed at once; the audit is still sealed. */
  hurry?: AbortSignal;
  /**
   * Namespaces for the engine (default: `AGENT_HARNESS_ISOLATION` of `hostEnv`, else `auto`): `auto` uses them
   * where available and falls back with a warning, `require` refuses without them, `off` never uses them.
   */
  isolation?: IsolationMode;
  /**
   * What an engine CLI version its adapter was not checked against does (`EngineAdapter.checkedVersions`): `any` and
   * `warn` (default) run it, marked unchecked in the meta; `checked` refuses it with ENGINE_VERSION_UNCHECKED before
   * a run directory exists.
   */
  engineVersions?: EngineVersionPolicy;
  /**
   * Host paths the agent sees inside its mount namespace beyond its workspace, managed HOME and TMPDIR: `PATH`
   * (read-write), `PATH:ro`, or `{ path, readOnly }`; relative paths against the project root. Each must exist
   * (CONFIG_INVALID otherwise).
   */
  expose?: readonly ExposeEntry[];
  /** Host environment (default `process.env`): where the allowlist and live keys come from. */
  hostEnv?: NodeJS.ProcessEnv;
  /** Raw output as it arrives (for live views). */
  onOutput?: (stream: StreamName, chunk: Uint8Array) => void;
  /**
   * JSON bytes of RASP, and of FCMP, the attempt keeps in memory for its result (default: `AGENT_HARNESS_EVENT_MEMORY_BYTES`
   * of `hostEnv`, else 4 MiB each). Every event is
   * in the audit files as it is built; past this budget the files are the only copy, so a long attempt's memory stays
   * flat, and the result reads its `rasp`, `fcmp` and `toolCalls` from them when they are first used.
   */
  eventMemoryBytes?: number;
  /** RASP events as they are built (for live views). */
  onRaspEvent?: (event: RaspEvent) => void;
  /**
   * FCMP events as they are translated, interleaved with `onRaspEvent` in the one order of the attempt: the FCMP a
   * RASP event gives comes right after it; a tool result completed later (its exit code seen in the engine's next
   * model request) comes before the RASP event it was completed at. Views map these (`translate/fcmp-tool-calls.ts`).
   */
  onFcmpEvent?: (event: FcmpEvent) => void;
  /** Called once the run and attempt are known, before the engine starts. */
  onReady?: (info: AttemptReadyInfo) => void;
  /**
   * A namespace init started before the attempt (`startEarlyInit`; the CLI's `start` starts one first thing): the
   * attempt adopts it where it fits (split streams, a model server on loopback, no other forwarded port), else it is
   * killed. Either way the attempt owns it from the call on.
   */
  earlyInit?: EarlyInit | null;
}

/** Where an attempt's cassette is and how it is used. */
export interface AttemptCassette extends CassetteForkInput {
  /** The cassette file (relative to the project root). */
  path: string;
  /** Replay: a miss or an unused recorded call fails the attempt (default true); false falls back to the script. */
  strict?: boolean;
  /** Replay: 0 (default) serves at once; 1 at the recorded pace; 2 twice as slow. */
  pace?: number;
  /** `auto`: record even when the cassette exists (Vitest's `-u`). */
  update?: boolean;
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
  /** The namespaces the engine runs in. */
  isolation: IsolationRecord;
  /**
   * The engine CLI's version, whether its adapter was checked against it, and the versions it was (meta's
   * `engine_version`, `engine_version_checked`, `engine_checked_versions`). Absent in infos made before the policy.
   */
  engineVersion?: { version: string | null; checked: boolean | null; checkedVersions: string | null };
}

/** What a run does with an engine CLI version its adapter was not checked against (see `AttemptRequest`). */
export type EngineVersionPolicy = 'checked' | 'warn' | 'any';
