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
import type { McpServer } from '@agentclientprotocol/sdk';
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
}

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

/** Starts the client on an engine that is being started. */
export function startAcpClient(options: AcpClientOptions): AcpClient {
  let controller!: ReadableStreamDefaultController<Uint8Array>;
  let ended = false;
  let stdoutLines = 0;
  let lastOutput = performance.now();
  const input = new ReadableStream<Uint8Array>({
    start(c) {
      controller = c;
    },
  });
  let stdinClosed = false;
  const closeStdin = (): void => {
    if (stdinClosed) return;
    stdinClosed = true;
    options.stdin.end();
  };
  const output = new WritableStream<Uint8Array>({
    write(chunk) {
      if (stdinClosed) return;
      options.onSent(chunk);
      options.stdin.write(chunk);
    },
    close() {
      closeStdin();
    },
  });
  const { signal } = options;
  const connection = client({ name: 'agent-harness' })
    .onNotification('session/update', () => undefined)
    .onRequest('session/request_permission', ({ params }) => {
      if (signal?.aborted) {
        options.onDiagnostic({
          code: 'ACP_PERMISSION_ANSWERED',
          message: 'cancelled: the attempt is being canceled',
          level: 'info',
        });
        return { outcome: { outcome: 'cancelled' } };
      }
      const decision = decidePermission(params as unknown as PermissionQuestion, options.agentOptions);
      options.onDiagnostic({
        code: 'ACP_PERMISSION_ANSWERED',
        message: `${decision.verdict} ${decision.names[0] ?? 'a tool'}${decision.optionId ? ` (option ${decision.optionId})` : ''}: ${decision.rule}`,
        level: decision.verdict === 'allow' ? 'info' : 'warning',
      });
      return decision.optionId
        ? { outcome: { outcome: 'selected', optionId: decision.optionId } }
        : { outcome: { outcome: 'cancelled' } };
    })
    .connect(ndJsonStream(output, input));

  let sessionId: string | null = options.resumeSessionId;
  const protocolError = (step: string, error: unknown): AgentHarnessError =>
    error instanceof AgentHarnessError
      ? error
      : new AgentHarnessError('ACP_PROTOCOL_ERROR', `ACP ${step} failed: ${messageOf(error)}`, {
          details: { step },
        });

  /** Resolves once the engine's stdout has been silent for {@link ACP_REPLAY_QUIET_MS} (bounded). */
  async function replayEnded(): Promise<void> {
    const since = performance.now();
    while (!ended && !signal?.aborted && performance.now() - since < ACP_REPLAY_MAX_WAIT_MS) {
      const quiet = performance.now() - lastOutput;
      if (quiet >= ACP_REPLAY_QUIET_MS) return;
      await new Promise((resolve) => setTimeout(resolve, ACP_REPLAY_QUIET_MS - quiet));
    }
  }

  async function converse(): Promise<AcpClientOutcome> {
    let step = 'initialize';
    try {
      const init = await connection.agent.request('initialize', {
        protocolVersion: PROTOCOL_VERSION,
        clientCapabilities: { fs: { readTextFile: false, writeTextFile: false }, terminal: false },
        clientInfo: { name: 'agent-harness', version: '1' },
      });
      const mcpServers = toAcpMcpServers(options.mcpServers);
      if (options.resumeSessionId) {
        const capabilities = init.agentCapabilities as
          | { loadSession?: boolean; sessionCapabilities?: { resume?: unknown } }
          | undefined;
        const params = { sessionId: options.resumeSessionId, cwd: options.cwd, mcpServers };
        if (capabilities?.loadSession) {
          step = 'session/load';
          await connection.agent.request('session/load', params as never);
          await replayEnded();
        } else if (capabilities?.sessionCapabilities?.resume) {
          step = 'session/resume';
          await connection.agent.request('session/resume' as never, params as never);
        } else {
          throw new AgentHarnessError(
            'ENGINE_CAPABILITY_UNAVAILABLE',
            `The engine's ACP mode offers neither session/load nor session/resume, so session ${options.resumeSessionId} cannot be resumed over ACP; resume it with transport 'native'.`,
            { details: { capability: 'acp.resume' } },
          );
        }
      } else {
        step = 'session/new';
        const created = await connection.agent.request('session/new', {
          cwd: options.cwd,
          mcpServers,
        });
        sessionId = created.sessionId;
      }
      step = 'session/prompt';
      const onAbort = (): void => {
        if (sessionId) void connection.agent.notify('session/cancel', { sessionId }).catch(() => undefined);
        // A prompt that does not answer `cancelled` in time is ended by stopping the engine.
        setTimeout(() => options.stop(), ACP_GRACE_MS).unref();
      };
      if (signal?.aborted) onAbort();
      else signal?.addEventListener('abort', onAbort, { once: true });
      options.onPrompt?.(stdoutLines);
      const answer = await connection.agent.request('session/prompt', {
        sessionId: sessionId!,
        prompt: [{ type: 'text', text: options.prompt }],
        _meta: { agentHarness: { afterStdoutLine: stdoutLines } },
      });
      signal?.removeEventListener('abort', onAbort);
      return { stopReason: answer.stopReason, sessionId, error: null };
    } catch (error) {
      const failure = protocolError(step, error);
      options.onDiagnostic({ code: failure.code, message: failure.message, level: 'error' });
      return { stopReason: null, sessionId, error: failure };
    }
  }

  const done = (async () => {
    if (signal?.aborted) {
      closeStdin();
      options.stop();
      return { stopReason: null, sessionId, error: null };
    }
    // Canceled before the session exists: nothing to tell the engine, it is stopped.
    const early = (): void => {
      if (!sessionId) options.stop();
    };
    signal?.addEventListener('abort', early, { once: true });
    const outcome = await converse();
    signal?.removeEventListener('abort', early);
    closeStdin();
    setTimeout(() => options.stop(), ACP_GRACE_MS).unref();
    return outcome;
  })();
  return {
    push(chunk) {
      if (ended) return;
      lastOutput = performance.now();
      for (const byte of chunk) if (byte === 0x0a) stdoutLines += 1;
      controller.enqueue(new Uint8Array(chunk));
    },
    end() {
      if (ended) return;
      ended = true;
      controller.close();
      connection.close();
    },
    done,
  };
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
