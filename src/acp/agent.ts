/**
 * The harness as an Agent Client Protocol agent (`agent-harness acp <engine>`): an editor drives one engine through
 * it, and each prompt is one audited, isolated attempt through core — the same path as `start` and `resume`.
 *
 * - `session/new` makes a run (a fresh directory under the run root, no attempt yet); the ACP session id is the
 *   run's handle. The editor's `cwd` is recorded in the run's label only: the engine works in the run directory,
 *   never in the editor's project.
 * - `session/prompt` runs one attempt: the first starts the engine's session, later ones resume it by the run's
 *   recorded session id. Its RASP events are sent live as `session/update` notifications (updates.ts); it answers
 *   `end_turn`, `cancelled` after `session/cancel` (the attempt's AbortSignal kills its processes and the audit is
 *   sealed), or a JSON-RPC error naming the failed attempt and its run.
 * - `session/load` takes a run handle of this engine and replays each attempt's recorded events as updates.
 */
import type {
  AgentApp,
  AgentContext,
  ContentBlock,
  LoadSessionRequest,
  McpServer,
  NewSessionRequest,
  PromptRequest,
  SessionUpdate,
} from '@agentclientprotocol/sdk';
import type { AttemptRequest } from '../core/attempt-request.js';
import { readRecordedEvents } from '../core/recorded-events.js';
import { runAttempt } from '../core/run-attempt.js';
import { findRun } from '../core/session.js';
import { checkAgentOptions } from '../engines/agent-options.js';
import { loadEngine } from '../engines/registry.js';
import { AgentHarnessError, toAgentHarnessError } from '../errors/index.js';
import type { ModelScript } from '../model/index.js';
import {
  DEFAULT_AGENT_OPTIONS,
  McpServerDefSchema,
  type AgentOptions,
  type EngineId,
  type IsolationMode,
  type McpServerDef,
  type ModelMode,
  type RunIndexEntry,
} from '../protocol/index.js';
import type { HarnessPaths } from '../runtime/paths.js';
import { createRun } from '../runtime/run-store.js';
import { loadAcpSdk } from '../engines/acp/sdk.js';
import type { AttemptEvent } from '../translate/attempt-events.js';
import { createSessionUpdateMapper, stopReasonOf } from './updates.js';

// The SDK is an optional peer: importing this module is its first use (DEPENDENCY_MISSING when it is absent).
const { PROTOCOL_VERSION, RequestError, agent } = await loadAcpSdk();
type RequestError = InstanceType<typeof RequestError>;

/** What `agent-harness acp` serves: one engine, and the harness options every attempt of every session gets. */
export interface AcpAgentOptions {
  engine: EngineId;
  paths: HarnessPaths;
  modelMode: ModelMode;
  /** The scripted model's script (loaded once, recorded in each run), or null for the built-in short reply. */
  script: ModelScript | null;
  isolation?: IsolationMode;
  timeoutMs?: number;
  onlySkills?: readonly string[];
  hostEnv?: NodeJS.ProcessEnv;
  /** The agent's version, answered in `initialize`. */
  version: string;
  /** One line of log (stderr: stdout carries JSON-RPC only). */
  log: (line: string) => void;
}

/** A turn in progress. */
interface Turn {
  /** Aborted by `session/cancel`, the prompt's own abort or the agent's end: the turn was cancelled. */
  controller: AbortController;
  done: Promise<unknown>;
}

/** One ACP session: a run of the engine. */
interface AcpSession {
  runDir: string;
  agentOptions: AgentOptions | null;
  turn: Turn | null;
}

/** The ACP agent and what its command needs to end cleanly. */
export interface AcpAgent {
  app: AgentApp;
  /** Cancels every running turn (a closed connection, a signal). */
  cancelAll(): void;
  /** Settles once no turn runs (each cancelled one sealed). */
  settled(): Promise<void>;
}

/** The text an engine gets for a prompt: text blocks, embedded text resources and links, in order. */
export function promptText(blocks: readonly ContentBlock[]): string {
  const parts: string[] = [];
  for (const block of blocks) {
    if (block.type === 'text') parts.push(block.text);
    else if (block.type === 'resource_link') parts.push(`@${block.uri}`);
    else if (block.type === 'resource' && 'text' in block.resource)
      parts.push(`<context uri="${block.resource.uri}">\n${block.resource.text}\n</context>`);
  }
  const text = parts.join('\n\n').trim();
  if (text.length === 0)
    throw RequestError.invalidParams(
      { prompt: blocks.map((block) => block.type) },
      'The prompt has no text: agent-harness passes text, resource links and embedded text resources to the engine.',
    );
  return text;
}

/**
 * The editor's MCP servers as the harness's definitions (stdio and HTTP; each engine maps them onto its config).
 * SSE servers are refused: no engine the harness drives takes them.
 */
export function mcpServerDefs(servers: readonly McpServer[]): McpServerDef[] {
  return servers.map((server) => {
    if ('type' in server && server.type === 'sse')
      throw RequestError.invalidParams(
        { mcpServer: server.name },
        `MCP server ${JSON.stringify(server.name)} is an SSE server; agent-harness passes stdio and HTTP servers only.`,
      );
    const def =
      'type' in server && server.type === 'http'
        ? {
            name: server.name,
            url: server.url,
            ...bearerOf(server.headers),
          }
        : {
            name: server.name,
            command: [(server as { command: string }).command, ...(server as { args: string[] }).args],
            ...((server as { env: { name: string; value: string }[] }).env.length > 0
              ? {
                  env: Object.fromEntries(
                    (server as { env: { name: string; value: string }[] }).env.map((v) => [v.name, v.value]),
                  ),
                }
              : {}),
          };
    const parsed = McpServerDefSchema.safeParse(def);
    if (!parsed.success)
      throw RequestError.invalidParams(
        { mcpServer: server.name },
        `MCP server ${JSON.stringify(server.name)}: ${parsed.error.issues.map((issue) => `${issue.path.join('.') || 'server'}: ${issue.message}`).join('; ')}.`,
      );
    return parsed.data;
  });
}

function bearerOf(headers: readonly { name: string; value: string }[]): { bearerToken?: string } {
  const auth = headers.find((header) => header.name.toLowerCase() === 'authorization')?.value;
  const token = auth && /^Bearer\s+(.+)$/i.exec(auth)?.[1];
  return token ? { bearerToken: token } : {};
}

/** An AgentHarnessError as a JSON-RPC error an editor shows: its code, message and hint. */
function requestErrorOf(error: unknown, extra: Record<string, unknown> = {}): RequestError {
  if (error instanceof RequestError) return error;
  const harness = toAgentHarnessError(error);
  const invalid = ['USAGE_ERROR', 'CONFIG_INVALID', 'ENGINE_CAPABILITY_UNAVAILABLE', 'RUN_NOT_FOUND'].includes(
    harness.code,
  );
  const data = { code: harness.code, hint: harness.hint, ...extra };
  return invalid
    ? RequestError.invalidParams(data, `${harness.code}: ${harness.message}`)
    : RequestError.internalError(data, `${harness.code}: ${harness.message}`);
}

/** What the agent's handlers read and change: its options and open sessions, explicit. */
interface AcpAgentState {
  readonly options: AcpAgentOptions;
  /** The open sessions, by ACP session id (the run's handle). */
  readonly sessions: Map<string, AcpSession>;
}

/** What a prompt answers when its attempt ended as the editor expects. */
type TurnAnswer = { stopReason: 'end_turn' | 'cancelled'; _meta: Record<string, unknown> };

/** Creates the ACP agent of one engine. */
export function createAcpAgent(options: AcpAgentOptions): AcpAgent {
  const state: AcpAgentState = { options, sessions: new Map() };
  const { engine } = options;
  const app = agent({ name: `agent-harness ${engine}` })
    .onRequest('initialize', () => ({
      protocolVersion: PROTOCOL_VERSION,
      agentCapabilities: {
        loadSession: true,
        promptCapabilities: { image: false, audio: false, embeddedContext: true },
        mcpCapabilities: { http: true, sse: false },
      },
      agentInfo: { name: 'agent-harness', title: `agent-harness (${engine})`, version: options.version },
      authMethods: [],
    }))
    .onRequest('session/new', ({ params }) => newSession(state, params))
    .onRequest('session/load', ({ params, client }) => loadSession(state, params, client))
    .onRequest('session/prompt', ({ params, client, signal }) => promptSession(state, params, client, signal))
    .onNotification('session/cancel', ({ params }) => cancelSession(state, params.sessionId));
  return {
    app,
    cancelAll() {
      for (const session of state.sessions.values()) {
        session.turn?.controller.abort();
      }
    },
    async settled() {
      await Promise.all([...state.sessions.values()].map((session) => session.turn?.done));
    },
  };
}

/** Sends one `session/update` notification to the editor. */
function sendUpdate(client: AgentContext, sessionId: string, update: SessionUpdate): Promise<void> {
  return client.notify('session/update', { sessionId, update });
}

/** The agent options of a session with the editor's MCP servers (checked against the engine), null without any. */
async function agentOptionsFor(engine: EngineId, servers: readonly McpServer[]): Promise<AgentOptions | null> {
  if (servers.length === 0) return null;
  const agentOptions: AgentOptions = { ...DEFAULT_AGENT_OPTIONS, mcpServers: mcpServerDefs(servers) };
  checkAgentOptions(await loadEngine(engine), agentOptions);
  return agentOptions;
}

/** Replays a run's recorded attempts as updates (session/load), from their RASP and FCMP in their live order. */
async function replayRun(client: AgentContext, sessionId: string, run: RunIndexEntry): Promise<void> {
  for (let attempt = 1; attempt <= run.attempts; attempt += 1) {
    const events = readRecordedEvents(run.run_dir, attempt);
    if (!events) continue;
    const toUpdates = createSessionUpdateMapper();
    for (const event of events) for (const update of toUpdates(event)) await sendUpdate(client, sessionId, update);
  }
}

/** `session/new`: makes a run and opens its session (changes `sessions`). */
async function newSession(state: AcpAgentState, params: NewSessionRequest) {
  const { engine, paths, log } = state.options;
  try {
    const agentOptions = await agentOptionsFor(engine, params.mcpServers);
    const run = await createRun(paths.runRoot, {
      engine,
      translateMode: 0,
      modelMode: state.options.modelMode,
      script: state.options.script,
      label: `acp: ${params.cwd}`,
    });
    state.sessions.set(run.handle, { runDir: run.run_dir, agentOptions, turn: null });
    log(`session ${run.handle}: new run of ${engine} in ${run.run_dir} (editor cwd ${params.cwd})`);
    return { sessionId: run.handle, _meta: { agentHarness: { handle: run.handle, runDir: run.run_dir } } };
  } catch (error) {
    throw requestErrorOf(error);
  }
}

/** `session/load`: reopens a run of this engine as a session and replays it (changes `sessions`). */
async function loadSession(state: AcpAgentState, params: LoadSessionRequest, client: AgentContext) {
  const { engine, paths, log } = state.options;
  try {
    const run = await findRun(paths, { selector: params.sessionId });
    if (run.engine !== engine)
      throw new AgentHarnessError(
        'USAGE_ERROR',
        `Run ${run.handle} is a ${run.engine} run; this agent serves ${engine}. Load it with \`agent-harness acp ${run.engine}\`.`,
      );
    const agentOptions = await agentOptionsFor(engine, params.mcpServers);
    const existing = state.sessions.get(params.sessionId);
    if (existing?.turn)
      throw new AgentHarnessError('USAGE_ERROR', `Session ${params.sessionId} has a prompt running; wait for it.`);
    state.sessions.set(params.sessionId, { runDir: run.run_dir, agentOptions, turn: null });
    await replayRun(client, params.sessionId, run);
    log(`session ${params.sessionId}: loaded run ${run.handle} (${run.attempts} attempts) in ${run.run_dir}`);
    return { _meta: { agentHarness: { handle: run.handle, runDir: run.run_dir } } };
  } catch (error) {
    throw requestErrorOf(error);
  }
}

/** `session/prompt`: one turn of an open session, one at a time (changes the session's `turn`). */
async function promptSession(
  state: AcpAgentState,
  params: PromptRequest,
  client: AgentContext,
  signal: AbortSignal,
): Promise<TurnAnswer> {
  const session = state.sessions.get(params.sessionId);
  if (!session)
    throw new RequestError(
      -32002,
      `Session ${JSON.stringify(params.sessionId)} is not open in this agent: create one with session/new, or reopen a run by its handle with session/load.`,
      { sessionId: params.sessionId },
    );
  if (session.turn)
    throw RequestError.invalidRequest(
      { sessionId: params.sessionId },
      `Session ${params.sessionId} already has a prompt running; wait for its answer or send session/cancel.`,
    );
  const text = promptText(params.prompt);
  const turn: Turn = { controller: new AbortController(), done: Promise.resolve() };
  const onAbort = (): void => turn.controller.abort();
  signal.addEventListener('abort', onAbort, { once: true });
  session.turn = turn;
  const done = runTurn(state.options, client, params.sessionId, session, text, turn);
  turn.done = done.catch(() => undefined);
  try {
    return await done;
  } catch (error) {
    throw requestErrorOf(error, { sessionId: params.sessionId });
  } finally {
    signal.removeEventListener('abort', onAbort);
    session.turn = null;
  }
}

/** `session/cancel`: aborts the session's running turn, if any. */
function cancelSession(state: AcpAgentState, sessionId: string): void {
  const turn = state.sessions.get(sessionId)?.turn;
  if (!turn) return;
  state.options.log(`session ${sessionId}: cancel: stopping the engine and sealing the audit`);
  turn.controller.abort();
}

/** Runs one turn as an attempt (start, or resume of the run's session), its events sent live as updates. */
async function runTurn(
  options: AcpAgentOptions,
  client: AgentContext,
  sessionId: string,
  session: AcpSession,
  text: string,
  turn: Turn,
): Promise<TurnAnswer> {
  const { engine, paths, log } = options;
  const run = await findRun(paths, { runDir: session.runDir });
  const launch = run.session_id ? 'resume' : 'start';
  const toUpdates = createSessionUpdateMapper();
  // Notifications go out in event order, and all of them before the prompt's answer.
  let sent: Promise<void> = Promise.resolve();
  const forward = (event: AttemptEvent): void => {
    for (const update of toUpdates(event))
      sent = sent
        .then(() => sendUpdate(client, sessionId, update))
        .catch((error: unknown) => log(`session/update for ${sessionId} not sent: ${String(error)}`));
  };
  const request: AttemptRequest = {
    paths,
    engine,
    launch,
    run,
    ...(launch === 'start' ? { prompt: text } : { message: text }),
    modelMode: options.modelMode,
    ...(options.script ? { script: options.script } : {}),
    ...(options.isolation ? { isolation: options.isolation } : {}),
    ...(options.timeoutMs ? { timeoutMs: options.timeoutMs } : {}),
    ...(options.onlySkills ? { onlySkills: options.onlySkills } : {}),
    ...(options.hostEnv ? { hostEnv: options.hostEnv } : {}),
    ...(session.agentOptions ? { agentOptions: session.agentOptions } : {}),
    io: 'split',
    signal: turn.controller.signal,
    onRaspEvent: (event) => forward(event),
    onFcmpEvent: (event) => forward(event),
    onReady: (info) =>
      log(`session ${sessionId}: attempt ${info.attempt} (${launch}) of ${engine} in ${info.run.run_dir}`),
  };
  const result = await runAttempt(request);
  await sent;
  log(
    `session ${sessionId}: attempt ${result.attempt} ended ${result.completion.state}${result.completion.code ? ` (${result.completion.code})` : ''}; audit: ${result.audit.dir}`,
  );
  const meta = {
    agentHarness: {
      handle: result.handle,
      runDir: result.runDir,
      attempt: result.attempt,
      engineSessionId: result.sessionId,
      completion: result.completion,
      audit: result.audit.dir,
    },
  };
  const stopReason = stopReasonOf(result, turn.controller.signal.aborted);
  if (stopReason === 'end_turn' || stopReason === 'cancelled') return { stopReason, _meta: meta };
  const reason = result.error?.message ?? result.completion.reason;
  throw RequestError.internalError(
    { code: result.error?.code ?? result.completion.code ?? null, ...meta.agentHarness },
    `Attempt ${result.attempt} of run ${result.handle} (${engine}) ended ${result.completion.state}: ${reason}. Its audit is in ${result.audit.dir}.`,
  );
}
