/**
 * The engine contract. An engine is data plus pure-ish functions: `prepare` writes its config/trust/skills
 * roots into the managed home, `buildStartArgs`/`buildResumeArgs` build argv, `createParser` turns its native
 * output into RASP parsed events, `tools` tells the scripted model server how to call its tools. Optional members
 * mark optional capabilities; the members that are facts (`EngineFacts`) are declared in the engine's `facts.ts`. Every
 * engine is one line of `registry.ts`; `docs/adding-an-engine.md` lists the steps, and
 * `tests/contract/engine-registry.contract.test.ts` checks each registered engine's members.
 */
import type { AgentOptions } from '../protocol/index.js';
import type { AgentOptionsContext, AppliedAgentOptions } from './agent-options.js';
import type { ResumeFlag } from './resume-flags.js';
import type { EngineToolTable } from '../model/tool-table.js';
import type { WireApiId } from '../model/wire-api.js';
import type {
  ConfigInjection,
  Diagnostic,
  EngineId,
  FailureCategory,
  ModelMode,
  ParsedEvent,
  StreamName,
} from '../protocol/index.js';

/** The wire APIs the scripted model server speaks. */
export type WireApi = WireApiId;

/** What an engine needs to know to prepare one attempt. */
export interface EnginePrepareContext {
  /** The run directory: the agent's working directory. */
  runDir: string;
  /** Managed HOME given to the engine process. */
  agentHome: string;
  /** Model mode of the run. */
  modelMode: ModelMode;
  /** Base URL of the scripted model server (`http://127.0.0.1:PORT`), null in live mode. */
  modelBaseUrl: string | null;
  /** Name of the harness profile for engines that have profiles (codex). */
  profile: string;
  /**
   * The engine runs on a terminal (PTY or live passthrough): its TUI may read and write trust itself, so trust goes
   * into its config file. Without one, an engine that takes trust on its command line gets it there (codex).
   */
  interactive: boolean;
}

/** The result of {@link EngineAdapter.prepare}. */
export interface PreparedEngine {
  /** Env vars the engine needs on top of the managed base env (config homes, fake keys, quiet flags). */
  env: Record<string, string>;
  /** Directories the engine reads config from; checked against the host HOME before spawning. */
  configRoots: string[];
  /** Arguments placed before any other argument (global flags such as codex `-c key=value`). */
  leadingArgs: string[];
  /** Summary for the audit meta. */
  configInjection: ConfigInjection | null;
  /**
   * Trust registration done for the run dir, or null when the engine has no trust concept. `via: 'argv'`: given on
   * the engine's command line for this process only; nothing was written to `config_path`, nothing to undo.
   */
  trust: { path: string; config_path: string; via?: 'config' | 'argv' } | null;
  /** Undo what must not outlive the attempt (trust registration). Never throws; safe to call twice. */
  cleanup(): Promise<void>;
}

/** One line of parser output: a parsed engine event or a diagnostic. */
export type ParserOutput = ParsedEvent | { type: 'diagnostic'; diagnostic: Diagnostic };

/** A stateful parser of one attempt's native output. Never throws. */
export interface EngineParser {
  /** Called with each complete line (without the line terminator) of a stream, in arrival order. */
  line(stream: StreamName, text: string): ParserOutput[];
  /** Called once when the process has exited and every line was fed. */
  end(): ParserOutput[];
}

/** A row of an engine's error-pattern table: a message pattern and what it means. */
export interface ErrorPattern {
  /** Matched against engine error messages (case-insensitive regexes are recommended). */
  pattern: RegExp;
  /** Category for `conversation.failed`. */
  category: FailureCategory;
  /** Stable code for `conversation.failed`. */
  code: string;
  /**
   * Also names an exit without a turn end: when the engine's last error message matches this row and it exits
   * before its turn ends, the failure gets this row's code (the reason stays `exited_without_turn_end`). For messages
   * an engine prints only when it refuses to start a turn (codex: the session already has an active writer).
   */
  onExit?: boolean;
}

/** What {@link EngineAdapter.recoverSession} needs to find the session an interactive attempt recorded. */
export interface SessionRecoveryContext {
  /** The run directory (the session's working directory). */
  runDir: string;
  /** Managed HOME of the engine (where its session store lives). */
  agentHome: string;
  /** When the attempt started: only sessions written since count. */
  since: Date;
}

/** Input of {@link EngineAdapter.buildStartArgs}. */
export interface StartArgsRequest {
  /** A prompt for the engine's default headless command; used when `passthrough` is empty. */
  prompt: string | null;
  /** Arguments given by the user, passed verbatim and in order. */
  passthrough: readonly string[];
}

/** Input of {@link EngineAdapter.buildResumeArgs}. */
export interface ResumeArgsRequest {
  /** Session id recorded from the previous attempt. */
  sessionId: string;
  /** The next user message. */
  message: string;
}

/**
 * An executable the harness starts in place of the installed one, as the installed launcher script would start it: a
 * native binary (codex, copilot), or Node running the engine's script (gemini, qwen: with V8's `--liftoff-only` added).
 */
export interface NativeLaunch {
  /** The executable started: the native binary, or Node (`process.execPath`) for a Node engine's script. */
  file: string;
  /**
   * Arguments `file` gets before the engine's own (a Node engine's script, after the Node flags it runs with). Absent:
   * none.
   */
  args?: readonly string[];
  /** Variables the launcher sets for it. */
  env: Record<string, string>;
  /** The launcher script stood in for (realpath). */
  launcher: string;
  /**
   * Files the binary reads besides itself (copilot's unpacked package): an isolated agent sees each one's installation
   * root read-only, as it sees the binary's. Absent: none.
   */
  readOnly?: readonly string[];
  /**
   * A directory in the harness's cache whose contents are copied into the attempt's own TMPDIR before the binary
   * starts (copilot's warmed V8 compile cache): a copy, so what the agent does to it stays in its attempt. Absent: none.
   */
  tmpSeed?: string;
}

/** What {@link EngineAdapter.resolveNativeLaunch} may use: the harness's own cache directory. */
export interface NativeLaunchContext {
  /** The managed agent cache (`SKILL_RUNNER_AGENT_CACHE_DIR`): never writable by an agent. */
  cacheDir: string;
}

/** What {@link AcpSupport.command} gets: one attempt's prepared engine. */
export interface AcpLaunchContext {
  /** The engine's CLI as the native transport runs it (resolved executable). */
  executable: string;
  /** The attempt's prepared engine: its env (config homes, placeholder key, base URL) and leading args. */
  prepared: PreparedEngine;
  /** The run directory: the ACP session's `cwd`. */
  runDir: string;
  /** Managed HOME of the engine. */
  agentHome: string;
  /** Base URL of the scripted model server, null in live mode. */
  modelBaseUrl: string | null;
}

/** The command that runs an engine as an ACP agent on its stdin/stdout. */
export interface AcpCommand {
  /** Executable (absolute path). */
  file: string;
  /** Its arguments. */
  args: string[];
  /** Variables on top of the attempt's engine env. */
  env: Record<string, string>;
}

/**
 * How an engine speaks the Agent Client Protocol (issue 34, `extra.transport: 'acp'` in a provider query): its CLI's
 * own ACP mode, or an adapter package (pinned as a devDependency like the CLIs) that drives the pinned CLI.
 */
export interface AcpSupport {
  /** `native`: the CLI's own mode (`gemini --acp`); else the adapter's npm package and bin. */
  readonly via: 'native' | { readonly package: string; readonly bin: string };
  /** The command for one attempt. Throws ENGINE_CAPABILITY_UNAVAILABLE when the adapter is not installed. */
  command(ctx: AcpLaunchContext): AcpCommand;
  /**
   * Throws ENGINE_CAPABILITY_UNAVAILABLE (naming the package) when the adapter is not installed: checked before the
   * run exists. Absent: nothing to install (a native mode).
   */
  installed?(): void;
  /**
   * Readies the engine's own session store for `session/load` of a session, before the engine starts (gemini 0.61
   * would write its new chat record over the session's own file). Never throws. Absent: nothing to ready.
   */
  beforeLoad?(ctx: AcpLoadContext): void;
  /**
   * True when `session/new` is not enough for the query's MCP servers: the agent options mapper is given them too, with
   * `transport: 'acp'` in its context, and adds what the engine's ACP mode needs (copilot takes only HTTP servers from
   * the client; qwen hides the client's servers' tools behind its tool search). Absent: they go to `session/new` only.
   */
  readonly mcpInAgentOptions?: boolean;
  /**
   * True when the engine keeps running once its stdin is closed after the prompt and its session store records turn
   * ends (codex-acp 0.x): the harness then stops it as soon as that store holds the turn (`recoverSession`), not after
   * the client's grace. Absent: the engine exits by itself when its stdin closes, or is stopped after the grace.
   */
  readonly staysAfterStdinCloses?: boolean;
}

/** What {@link AcpSupport.beforeLoad} is given. */
export interface AcpLoadContext {
  /** The run directory: the session's `cwd`. */
  runDir: string;
  /** Managed HOME of the engine (where its session store lives). */
  agentHome: string;
  /** The session to be loaded. */
  sessionId: string;
}

/** An engine adapter. One per folder under `src/engines/` (`<id>/index.ts`: its facts and its code). */
export interface EngineAdapter {
  /** Engine id. */
  readonly id: EngineId;
  /** Name of the executable looked up in the managed prefix, `node_modules/.bin`, then PATH. */
  readonly executableName: string;
  /** npm package that ships the CLI (pinned as a devDependency), or null when none is served. */
  readonly packageName: string | null;
  /**
   * The CLI versions this adapter was checked against: a range (`>=2.1.197 <2.2.0`, `1.0.102`; comparators joined by
   * spaces, alternatives by `||`) or a list of them (`engine-versions.ts`). A run with another version is marked
   * unchecked (meta `engine_version_checked: false`). Absent: the adapter names none, and no run of it is checked.
   */
  readonly checkedVersions?: string | readonly string[];
  /** Where skills go, relative to the run dir (e.g. `.codex/skills`). */
  readonly skillRoot: string;
  /**
   * How the scripted model server calls this engine's tools: its shell tool, and its own tools for the script's
   * intents (`write_file`, `use_skill`) where it has them (`<id>/facts.ts`).
   */
  readonly tools: EngineToolTable;
  /** The flag of the engine's CLI that picks the model (`-m`, `--model`); also one of its `resumeFlags`. */
  readonly modelFlag: string;
  /** Vendor env vars passed through in live mode only. */
  readonly liveEnvKeys: readonly string[];
  /** How stdin is given: `ignore` closes it (codex waits for EOF otherwise). */
  readonly stdin: 'ignore' | 'pipe';
  /** Known error messages and what they mean. */
  readonly errorPatterns: readonly ErrorPattern[];
  /**
   * The native binary behind the installed executable when that is a launcher script the harness can stand in for
   * exactly (codex's npm `bin/codex.js`), or Node running a Node engine's script with the flags the harness gives it
   * (gemini, qwen), or null. Absent: the executable always runs as installed.
   */
  resolveNativeLaunch?(executable: string, ctx?: NativeLaunchContext): NativeLaunch | null;
  /** Writes config/trust for one attempt; throws ENGINE_CONFIG_INJECTION_FAILED on failure. */
  prepare(ctx: EnginePrepareContext): Promise<PreparedEngine>;
  /**
   * Maps agent options (permission mode, tool lists, system prompt, turn limit, MCP servers) onto the engine's own
   * controls for one attempt; throws ENGINE_CAPABILITY_UNAVAILABLE naming what it cannot do. Absent: only the
   * defaults are accepted.
   */
  applyAgentOptions?(options: AgentOptions, ctx: AgentOptionsContext): AppliedAgentOptions;
  /** argv (without the executable) for a new session. */
  buildStartArgs(request: StartArgsRequest): string[];
  /** argv for resuming a session. Absent when the engine cannot resume. */
  buildResumeArgs?(request: ResumeArgsRequest): string[];
  /**
   * The command the engine's own terminal UI tells the user to continue a session with (codex's TUI ends with
   * "To continue this session, run: codex resume <id>"). Run by hand it works outside the harness (the host's home,
   * no audit), so when the terminal output shows it the CLI says to use `agent-harness resume <handle>` instead.
   * Absent: the engine prints no such hint.
   */
  readonly nativeResumeCommand?: string;
  /**
   * Run-dir paths the engine itself writes on every run (not the agent's work), listed apart in the fs diff as
   * `engine_bookkeeping`. Absent: the engine writes none.
   */
  readonly bookkeepingPaths?: readonly string[];
  /** Flags of a start argv that a resume accepts too (carried over, see `resume-flags.ts`). */
  readonly resumeFlags?: readonly ResumeFlag[];
  /** The engine's ACP mode (`<id>/acp.ts`). Absent: `transport: 'acp'` is ENGINE_CAPABILITY_UNAVAILABLE. */
  readonly acp?: AcpSupport;
  /**
   * Over ACP, an `agent_message_chunk` that starts a message while a tool call runs and matches this is the engine's
   * own notice, not the model's words (copilot 1.0.102 forwards its `session.info` as a chunk `Info: <path>` while a tool runs): the
   * ACP parser makes it an `ACP_ENGINE_NOTICE` diagnostic. Absent: every chunk is the model's.
   */
  readonly acpNotice?: RegExp;
  /**
   * True when the engine has no startup timeout of its own for its stdio MCP servers and waits for a slow one however
   * long it takes (copilot 1.0.102): only the harness's MCP startup watchdog (`core/mcp-startup-watchdog.ts`) bounds
   * that wait, so `startupTimeoutMs` ends such an attempt with MCP_SERVER_STARTUP_STALLED rather than the engine's
   * MCP_SERVER_NOT_READY. Absent: the engine gives up on a server by its `startupTimeoutMs`.
   */
  readonly mcpStartupUnbounded?: boolean;
  /** A fresh parser for one attempt. */
  createParser(): EngineParser;
  /**
   * The engine's own init message (a native output line whose fields equal these, e.g. claude's `system/init`):
   * the one that opens a session and reports its tools and MCP servers. Providers hand it on as the `session`
   * event's `system_init` content. Absent: the engine prints no such message (its session id comes with other events).
   */
  readonly initMessage?: Readonly<Record<string, string>>;
  /**
   * True when every id in the parser's events (tool calls, messages) belongs to one turn: an id seen before the n-th
   * `engine.turn.started` (n ≥ 2) never comes again after it (codex suffixes its per-turn item ids with the turn).
   * A streamed translation then forgets the ids of finished turns, so its memory stays flat however long the stream.
   */
  readonly turnScopedIds?: boolean;
  /**
   * True when the `input_tokens` of the parser's usage leave out the tokens read from the prompt cache (reported
   * apart, as `cached_input_tokens`: Anthropic's usage, opencode's); exports that count the whole prompt (ATIF's
   * `prompt_tokens`) add them back. Absent: `input_tokens` include them.
   */
  readonly cacheReportedApart?: boolean;
  /**
   * Why the engine's tools cannot work in a run directory at `dir` (an absolute path), or null when they can; the
   * harness refuses such a directory before the run. Absent: every directory the harness accepts works.
   */
  workspacePathProblem?(dir: string): string | null;
  /**
   * The events of an interactive attempt (a live terminal, whose output is a TUI rather than events), read from the
   * engine's own session store: the session id, the turn, its messages. Absent: the engine's sessions cannot be
   * recovered, and an interactive attempt of it has no session id. The events may be read as they are consumed.
   */
  recoverSession?(ctx: SessionRecoveryContext): Promise<Iterable<ParserOutput>>;
  /**
   * The id of the session a new (start) attempt in `ctx.runDir` has recorded in the engine's own store since
   * `ctx.since`, read while the engine runs (`store-session.ts`), or null when there is none yet. For an engine that
   * names its session on stdout only at the end of its turn (copilot). Synchronous, cheap (it is called per line until
   * it finds one) and never throws. Absent: the session id comes from the engine's stdout alone.
   */
  sessionFromStore?(ctx: SessionRecoveryContext): string | null;
}

/**
 * The members of an {@link EngineAdapter} that are facts about the engine rather than work for one attempt: who it is,
 * where it finds skills, its tools, its error messages, its flags and how its output reads (`<id>/facts.ts`). Each is
 * declared once there; the adapter spreads them, and the registry loads them alone for `translate` and the scripted
 * model server, without config writers, leases, TOML or agent options.
 */
export type EngineFacts = Pick<
  EngineAdapter,
  | 'id'
  | 'executableName'
  | 'packageName'
  | 'liveEnvKeys'
  | 'stdin'
  | 'skillRoot'
  | 'tools'
  | 'errorPatterns'
  | 'modelFlag'
  | 'resumeFlags'
  | 'nativeResumeCommand'
  | 'bookkeepingPaths'
  | 'initMessage'
  | 'turnScopedIds'
  | 'cacheReportedApart'
  | 'acpNotice'
  | 'mcpStartupUnbounded'
  | 'createParser'
>;

/** The part of the {@link EngineFacts} that translating recorded output uses: the parser and how its output reads. */
export type TranslationAdapter = Pick<
  EngineFacts,
  'id' | 'createParser' | 'errorPatterns' | 'turnScopedIds' | 'cacheReportedApart' | 'acpNotice'
>;
