/**
 * The harness as the ACP client of an engine (a provider's `transport: 'acp'`): over the engine's live stdin and its
 * stdout, through the SDK's client connection, it sends `initialize` (no fs or terminal capability: the engine keeps
 * its own tools), `session/new` (the run directory, the MCP servers) or, to resume, `session/load` (else
 * `session/resume`), then one `session/prompt`. Permission requests are answered from the agent options
 * (`permissions.ts`); an abort sends `session/cancel`. Once the prompt answered (or failed) the engine's stdin is
 * closed, and the engine is stopped when it has not exited after a short grace. Every message the client sends is
 * handed to `onSent` as the bytes written (the audit's `acp-client.N.jsonl`). Imports nothing of core.
 */
import type { Writable } from 'node:stream';
import type { ClientConnection, McpServer } from '@agentclientprotocol/sdk';
import { AgentHarnessError } from '../../errors/index.js';
import type { AgentOptions, Diagnostic, McpServerDef } from '../../protocol/index.js';
import { decidePermission, type PermissionQuestion } from './permissions.js';
import { loadAcpSdk } from './sdk.js';

// The SDK is an optional peer: importing this module is its first use (DEPENDENCY_MISSING when it is absent).
const { client, ndJsonStream, PROTOCOL_VERSION } = await loadAcpSdk();

/** How long a canceled prompt may take to answer `cancelled`, and an engine to exit once its stdin is closed. */
export const ACP_GRACE_MS = 5_000;

/**
 * After `session/load`, the prompt waits until the engine's stdout has been silent this long (at most
 * {@link ACP_REPLAY_MAX_WAIT_MS}): the protocol has the replay of a loaded session's history end before the load's
 * answer, but gemini 0.61 streams it after, and a prompt sent at once would mix the replay into the turn.
 */
export const ACP_REPLAY_QUIET_MS = 500;
/** The most the prompt waits for a loaded session's replay to end. */
export const ACP_REPLAY_MAX_WAIT_MS = 5_000;

/** What {@link startAcpClient} needs. */
export interface AcpClientOptions {
  /** The engine's stdin. */
  stdin: Writable;
  /** The session's working directory (the run directory). */
  cwd: string;
  /** The prompt (start) or the next message (resume). */
  prompt: string;
  /** Resume this session (`session/load`) instead of opening one. */
  resumeSessionId: string | null;
  /** The query's MCP servers, given to `session/new` / `session/load`. */
  mcpServers: readonly McpServerDef[];
  /** The query's agent options: the permission policy. */
  agentOptions: AgentOptions;
  /** Aborted: `session/cancel`, then the engine is stopped. */
  signal?: AbortSignal;
  /** Each message written to the engine's stdin, as written. */
  onSent(bytes: Uint8Array): void;
  /** A diagnostic of the attempt (permission answers, protocol failures). */
  onDiagnostic(diagnostic: Diagnostic): void;
  /** Stops the engine (its processes are killed). */
  stop(): void;
  /**
   * Called as `session/prompt` is sent, with the number of stdout lines received before it (also sent as the prompt's
   * `_meta.agentHarness.afterStdoutLine`): what a loaded session printed before it is its history's replay.
   */
  onPrompt?(afterStdoutLines: number): void;
  /**
   * For an engine that stays running once its stdin is closed (codex-acp, claude-agent-acp): what its own session
   * store holds for the run now (the harness's `recoverSession`). Once it holds the prompt's turn end, everything of
   * the turn is on disk and the engine is stopped then, not after {@link ACP_GRACE_MS}. Absent: the grace.
   */
  storedTurns?(): Promise<StoredTurns | null>;
}

/** The session an engine's store holds for the run, and how many turn ends it has. */
export interface StoredTurns {
  sessionId: string;
  turnEnds: number;
}

/** How often {@link AcpClientOptions.storedTurns} is read while the engine stays after its stdin closed. */
export const ACP_STORE_POLL_MS = 100;

/** How the client's conversation ended. */
export interface AcpClientOutcome {
  /** The prompt's stop reason, or null when it never answered. */
  stopReason: string | null;
  /** The session id. */
  sessionId: string | null;
  /** ACP_PROTOCOL_ERROR or ENGINE_CAPABILITY_UNAVAILABLE when the conversation broke; null otherwise. */
  error: AgentHarnessError | null;
}

/** A running client: feed it the engine's stdout; `done` settles once it is finished. Never throws. */
export interface AcpClient {
  /** A chunk of the engine's stdout. */
  push(chunk: Uint8Array): void;
  /** The engine's stdout ended (it exited). */
  end(): void;
  /** Settles once the prompt answered, or the conversation broke; never rejects. */
  done: Promise<AcpClientOutcome>;
}

function messageOf(error: unknown): string {
  if (error instanceof Error) {
    const data = (error as { data?: unknown }).data;
    return data === undefined ? error.message : `${error.message} (${JSON.stringify(data)})`;
  }
  return String(error);
}

/** The engine's stdin as the client writes it: closed once, after which nothing more is written. */
interface EngineStdin {
  readonly options: Pick<AcpClientOptions, 'stdin' | 'onSent'>;
  closed: boolean;
}

/** What the client's steps read and change: its connection and conversation, explicit. */
interface ClientState {
  readonly options: AcpClientOptions;
  readonly stdin: EngineStdin;
  /** Feeds the engine's stdout to the SDK's connection. */
  readonly stdout: ReadableStreamDefaultController<Uint8Array>;
  readonly connection: ClientConnection;
  /** The engine's stdout ended. */
  ended: boolean;
  /** Lines of stdout received so far. */
  stdoutLines: number;
  /** When stdout last gave a chunk (`performance.now()`). */
  lastOutput: number;
  /** The session opened or resumed (null until `session/new` answers). */
  sessionId: string | null;
  /** The request under way, named in a protocol error. */
  step: string;
  /** What the engine's store held as the prompt was sent ({@link AcpClientOptions.storedTurns}); null: nothing known. */
  storedBefore: StoredTurns | null;
}

/** Starts the client on an engine that is being started. */
export function startAcpClient(options: AcpClientOptions): AcpClient {
  const stdin: EngineStdin = { options, closed: false };
  let stdout!: ReadableStreamDefaultController<Uint8Array>;
  const input = new ReadableStream<Uint8Array>({
    start(c) {
      stdout = c;
    },
  });
  const output = new WritableStream<Uint8Array>({
    write(chunk) {
      if (stdin.closed) return;
      options.onSent(chunk);
      options.stdin.write(chunk);
    },
    close() {
      closeStdin(stdin);
    },
  });
  const connection = client({ name: 'agent-harness' })
    .onNotification('session/update', () => undefined)
    .onRequest('session/request_permission', ({ params }) => answerPermission(options, params))
    .connect(ndJsonStream(output, input));
  const state: ClientState = {
    options,
    stdin,
    stdout,
    connection,
    ended: false,
    stdoutLines: 0,
    lastOutput: performance.now(),
    sessionId: options.resumeSessionId,
    step: 'initialize',
    storedBefore: null,
  };
  return {
    push: (chunk) => pushStdout(state, chunk),
    end: () => endStdout(state),
    done: runClient(state),
  };
}

/** Closes the engine's stdin, once (changes `closed`). */
function closeStdin(stdin: EngineStdin): void {
  if (stdin.closed) return;
  stdin.closed = true;
  stdin.options.stdin.end();
}

/** {@link AcpClient.push}: counts the chunk's lines and hands it to the connection (changes `stdoutLines`, `lastOutput`). */
function pushStdout(state: ClientState, chunk: Uint8Array): void {
  if (state.ended) return;
  state.lastOutput = performance.now();
  for (const byte of chunk) if (byte === 0x0a) state.stdoutLines += 1;
  state.stdout.enqueue(new Uint8Array(chunk));
}

/** {@link AcpClient.end}: ends the connection's input and the connection (changes `ended`). */
function endStdout(state: ClientState): void {
  if (state.ended) return;
  state.ended = true;
  state.stdout.close();
  state.connection.close();
}

/** A permission request answered from the agent options (`cancelled` once the attempt is being canceled). */
function answerPermission(options: AcpClientOptions, params: unknown) {
  if (options.signal?.aborted) {
    options.onDiagnostic({
      code: 'ACP_PERMISSION_ANSWERED',
      message: 'cancelled: the attempt is being canceled',
      level: 'info',
    });
    return { outcome: { outcome: 'cancelled' as const } };
  }
  const decision = decidePermission(params as PermissionQuestion, options.agentOptions);
  options.onDiagnostic({
    code: 'ACP_PERMISSION_ANSWERED',
    message: `${decision.verdict} ${decision.names[0] ?? 'a tool'}${decision.optionId ? ` (option ${decision.optionId})` : ''}: ${decision.rule}`,
    level: decision.verdict === 'allow' ? 'info' : 'warning',
  });
  return decision.optionId
    ? { outcome: { outcome: 'selected' as const, optionId: decision.optionId } }
    : { outcome: { outcome: 'cancelled' as const } };
}

/** The whole conversation, then the engine's stdin closed and a stop after the grace; never rejects. */
async function runClient(state: ClientState): Promise<AcpClientOutcome> {
  const { options } = state;
  const { signal } = options;
  if (signal?.aborted) {
    closeStdin(state.stdin);
    options.stop();
    return { stopReason: null, sessionId: state.sessionId, error: null };
  }
  // Canceled before the session exists: nothing to tell the engine, it is stopped.
  const early = (): void => {
    if (!state.sessionId) options.stop();
  };
  signal?.addEventListener('abort', early, { once: true });
  const outcome = await converse(state);
  signal?.removeEventListener('abort', early);
  closeStdin(state.stdin);
  setTimeout(() => {
    if (state.ended) return;
    options.onDiagnostic({
      code: 'ACP_ENGINE_STOPPED',
      message: `the engine was stopped ${ACP_GRACE_MS} ms after its stdin closed: it had not exited`,
      level: 'info',
    });
    options.stop();
  }, ACP_GRACE_MS).unref();
  if (outcome.stopReason !== null && options.storedTurns) void stopOnceStored(state, options.storedTurns);
  return outcome;
}

/**
 * Stops the engine as soon as its store holds the prompt's turn end (bounded by the grace, and by the engine's own
 * exit): for a new session, a turn end of this session; for a loaded one, one more than it held as the prompt was
 * sent. A store that cannot tell (another session newest, an unreadable file) leaves the engine its grace.
 */
async function stopOnceStored(state: ClientState, storedTurns: () => Promise<StoredTurns | null>): Promise<void> {
  const { sessionId, options, storedBefore } = state;
  const loaded = options.resumeSessionId !== null;
  if (sessionId === null || (loaded && storedBefore?.sessionId !== sessionId)) return;
  const least = 1 + (loaded ? storedBefore!.turnEnds : 0);
  const since = performance.now();
  while (!state.ended && performance.now() - since < ACP_GRACE_MS) {
    const stored = await storedTurns().catch(() => null);
    if (state.ended) return;
    if (stored?.sessionId === sessionId && stored.turnEnds >= least) {
      options.onDiagnostic({
        code: 'ACP_ENGINE_STOPPED',
        message: `the engine was stopped once its session store held the turn (turn ends: ${stored.turnEnds}): it stays running when its stdin closes`,
        level: 'info',
      });
      options.stop();
      return;
    }
    await new Promise((resolve) => setTimeout(resolve, ACP_STORE_POLL_MS));
  }
}

/** Resolves once the engine's stdout has been silent for {@link ACP_REPLAY_QUIET_MS} (bounded). */
async function replayEnded(state: ClientState): Promise<void> {
  const since = performance.now();
  while (!state.ended && !state.options.signal?.aborted && performance.now() - since < ACP_REPLAY_MAX_WAIT_MS) {
    const quiet = performance.now() - state.lastOutput;
    if (quiet >= ACP_REPLAY_QUIET_MS) return;
    await new Promise((resolve) => setTimeout(resolve, ACP_REPLAY_QUIET_MS - quiet));
  }
}

/** `initialize`, the session, then the prompt (a cancel on abort); a failure is the outcome's error, never thrown. */
async function converse(state: ClientState): Promise<AcpClientOutcome> {
  const { options, connection } = state;
  const { signal } = options;
  state.step = 'initialize';
  try {
    const init = await connection.agent.request('initialize', {
      protocolVersion: PROTOCOL_VERSION,
      clientCapabilities: { fs: { readTextFile: false, writeTextFile: false }, terminal: false },
      clientInfo: { name: 'agent-harness', version: '1' },
    });
    await openSession(state, init.agentCapabilities);
    state.step = 'session/prompt';
    const onAbort = (): void => {
      if (state.sessionId)
        void connection.agent.notify('session/cancel', { sessionId: state.sessionId }).catch(() => undefined);
      // A prompt that does not answer `cancelled` in time is ended by stopping the engine.
      setTimeout(() => options.stop(), ACP_GRACE_MS).unref();
    };
    if (signal?.aborted) onAbort();
    else signal?.addEventListener('abort', onAbort, { once: true });
    if (options.storedTurns && options.resumeSessionId !== null)
      state.storedBefore = await options.storedTurns().catch(() => null);
    options.onPrompt?.(state.stdoutLines);
    const answer = await connection.agent.request('session/prompt', {
      sessionId: state.sessionId!,
      prompt: [{ type: 'text', text: options.prompt }],
      _meta: { agentHarness: { afterStdoutLine: state.stdoutLines } },
    });
    signal?.removeEventListener('abort', onAbort);
    return { stopReason: answer.stopReason, sessionId: state.sessionId, error: null };
  } catch (error) {
    const failure = protocolError(state.step, error);
    options.onDiagnostic({ code: failure.code, message: failure.message, level: 'error' });
    return { stopReason: null, sessionId: state.sessionId, error: failure };
  }
}

/**
 * Opens the session: `session/new`, or to resume `session/load` (then waits for its replay to end), else
 * `session/resume`; ENGINE_CAPABILITY_UNAVAILABLE when the engine offers neither. Changes `step` and `sessionId`.
 */
async function openSession(state: ClientState, agentCapabilities: unknown): Promise<void> {
  const { options, connection } = state;
  const mcpServers = toAcpMcpServers(options.mcpServers);
  if (!options.resumeSessionId) {
    state.step = 'session/new';
    const created = await connection.agent.request('session/new', { cwd: options.cwd, mcpServers });
    state.sessionId = created.sessionId;
    return;
  }
  const capabilities = agentCapabilities as
    | { loadSession?: boolean; sessionCapabilities?: { resume?: unknown } }
    | undefined;
  const params = { sessionId: options.resumeSessionId, cwd: options.cwd, mcpServers };
  if (capabilities?.loadSession) {
    state.step = 'session/load';
    await connection.agent.request('session/load', params as never);
    await replayEnded(state);
  } else if (capabilities?.sessionCapabilities?.resume) {
    state.step = 'session/resume';
    await connection.agent.request('session/resume' as never, params as never);
  } else {
    throw new AgentHarnessError(
      'ENGINE_CAPABILITY_UNAVAILABLE',
      `The engine's ACP mode offers neither session/load nor session/resume, so session ${options.resumeSessionId} cannot be resumed over ACP; resume it with transport 'native'.`,
      { details: { capability: 'acp.resume' } },
    );
  }
}

/** A failure of `step` as the conversation's error: ACP_PROTOCOL_ERROR unless it already is the harness's. */
function protocolError(step: string, error: unknown): AgentHarnessError {
  return error instanceof AgentHarnessError
    ? error
    : new AgentHarnessError('ACP_PROTOCOL_ERROR', `ACP ${step} failed: ${messageOf(error)}`, {
        details: { step },
      });
}

/** MCP server definitions in ACP's `session/new` shape (stdio: command, args, env; HTTP: url, a Bearer header). */
function toAcpMcpServers(servers: readonly McpServerDef[]): McpServer[] {
  return servers.map((server) =>
    server.url
      ? {
          type: 'http',
          name: server.name,
          url: server.url,
          headers: server.bearerToken ? [{ name: 'Authorization', value: `Bearer ${server.bearerToken}` }] : [],
        }
      : {
          name: server.name,
          command: server.command![0],
          args: server.command!.slice(1),
          env: Object.entries(server.env ?? {}).map(([name, value]) => ({ name, value })),
        },
  );
}
