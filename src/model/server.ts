/**
 * The scripted model server: node:http on 127.0.0.1 (never another interface), an ephemeral port by default.
 * Every request gets an answer and a record; nothing hangs. It also acts as the egress guard: engines get
 * their proxy variables pointed here, so a CONNECT or an absolute-URL request to another host is refused (403)
 * and recorded. What a request gets is the router's (router.ts); what is kept of it, the request log's
 * (request-log.ts); this file listens, refuses what is not HTTP, and gives the server's handle.
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import http, { type IncomingMessage } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import path from 'node:path';
import type { Duplex } from 'node:stream';
import { AgentHarnessError } from '../errors/index.js';
import {
  createRequestLog,
  type EgressAttempt,
  type RecordedRequest,
  recordEgress,
  recordRequest,
  redactHeaders,
} from './request-log.js';
import { createRouteGates } from './route-gate.js';
import { handleRequest, json, LANE_PREFIX, type RouterState, toolsByWire, type WireInterceptor } from './router.js';
import type { ModelScript, ModelTurn } from './script.js';
import { tablesOfWire, type EngineToolTable } from './tool-table.js';

export type { EgressAttempt, RecordedRequest, ResponseKind } from './request-log.js';
export { LANE_PREFIX, WIRE_APIS } from './router.js';
export type { InterceptedRequest, InterceptOutcome, WireInterceptor } from './router.js';

/**
 * One attempt's own view of a shared server (see {@link ModelServer.openLane}): its base URL carries the lane's key,
 * so its requests are answered from its own script and recorded in its own list, whatever other attempts on the same
 * server do at the same time.
 */
export interface ModelLane {
  /** The lane's key (in its URL). */
  readonly key: string;
  /** `http://127.0.0.1:PORT/__attempt/KEY`: the base URL to give the engine, no trailing slash. */
  readonly url: string;
  /** The requests that came through this lane (live array; they are in the server's `requests` too). */
  readonly requests: RecordedRequest[];
  /** The lane's script (null = default replies). */
  readonly script: ModelScript | null;
  /** Replaces the lane's script for its following requests. */
  setScript(script: ModelScript | null): void;
  /** Adds turns after the lane script's last one (as {@link ModelServer.appendTurns}). */
  appendTurns(turns: readonly ModelTurn[]): void;
  /** Forgets the lane: its later requests get a 404. The server keeps running. */
  close(): void;
}

/** A running server. */
export interface ModelServer {
  /** `http://127.0.0.1:PORT`, no trailing slash. */
  readonly url: string;
  readonly port: number;
  /** Every request so far (live array). */
  readonly requests: RecordedRequest[];
  /** Every refused outbound attempt (live array). */
  readonly egress: EgressAttempt[];
  /** The script in force (null = default replies). */
  readonly script: ModelScript | null;
  /**
   * Why the request log (`logFile`) stopped being written, or null: a write failed (disk full), or something that is
   * not a regular file stood at its path. The requests are still answered and kept in `requests`.
   */
  readonly logError: Error | null;
  /** Replaces the script for the following requests (null = default replies). */
  setScript(script: ModelScript | null): void;
  /**
   * Adds turns after the script's last one, so a resumed session (whose turns are numbered across the session)
   * finds them where it continues; with the default script, the turns become the script.
   */
  appendTurns(turns: readonly ModelTurn[]): void;
  /**
   * Opens an attempt lane with its own script (default: a copy of the server's script in force): attempts that
   * share the server each take a lane, so their scripts never cross.
   */
  openLane(script?: ModelScript | null): ModelLane;
  /** Stops listening and closes every connection, keep-alive ones included; safe to call twice. */
  close(): Promise<void>;
}

/** Options of {@link listenModelServer}. */
export interface ModelServerOptions {
  /** The script; absent or null = the default script (a short text reply to every request). */
  script?: ModelScript | null;
  /** 0 (default) = ephemeral. */
  port?: number;
  /**
   * Appends each recorded request as a JSON line, as it is answered. A function is asked at each request (an
   * attempt starts its server before its audit directory exists); its directory must exist then.
   */
  logFile?: string | (() => string | null);
  /** Rewrites each line of the request log before it is written (an attempt's secrets redacted). */
  redactLog?: (line: string) => string;
  /** Called once when the log stops being written (see {@link ModelServer.logError}). */
  onLogError?: (error: Error) => void;
  /**
   * How to call the engines' tools (shell, intents): the tool tables of the engines this server serves, given by the
   * caller (the model server sits below the engines and names none of them; `startModelServer` in
   * engines/model-server.ts gives every registered engine's).
   */
  tools: readonly EngineToolTable[];
  /**
   * Takes each wire request before the script does (a cassette records or replays it): it answers the request and
   * says how, or returns null to leave it to the script (a lenient replay's miss).
   */
  intercept?: WireInterceptor | null;
}

/** `script` with `more` turns after its last (the default script becomes `more`). */
function withTurns(script: ModelScript | null, more: readonly ModelTurn[]): ModelScript {
  return { ...(script ?? { version: 1 as const }), turns: [...(script?.turns ?? []), ...more] };
}

/** Sockets taken over from HTTP (CONNECT, upgrade): closeAllConnections() no longer sees them. */
type Detached = Set<Duplex>;

/** Answers a socket taken over from HTTP with a plain status and closes it. */
function refuseRaw(detached: Detached, socket: Duplex, status: string, text: string): void {
  detached.add(socket);
  socket.on('error', () => undefined);
  socket.on('close', () => detached.delete(socket));
  socket.end(
    `HTTP/1.1 ${status}\r\ncontent-type: text/plain\r\ncontent-length: ${Buffer.byteLength(text)}\r\nconnection: close\r\n\r\n${text}`,
  );
}

/** The HTTP server: each request to the router (a bug answered 500), CONNECT and upgrades refused. */
function createHttpServer(state: RouterState, detached: Detached): http.Server {
  const { log } = state;
  const server = http.createServer((request, response) => {
    handleRequest(state, request, response).catch((error: unknown) => {
      const message = `agent-harness scripted model failed: ${(error as Error).message}`;
      try {
        recordRequest(log, {
          method: request.method ?? 'GET',
          path: request.url ?? '/',
          headers: redactHeaders(request.headers),
          status: 500,
          response_kind: 'server_error',
        });
      } catch {
        // The log file is unwritable; the request still gets its answer below.
      }
      if (!response.headersSent)
        json(response, 500, { error: { message, type: 'server_error', code: 'server_error' } });
      else response.end();
    });
  });
  server.on('connect', (request: IncomingMessage, socket: Duplex) => {
    const target = request.url ?? '';
    recordEgress(log, 'CONNECT', target);
    recordRequest(log, {
      method: 'CONNECT',
      path: target,
      headers: redactHeaders(request.headers),
      status: 403,
      response_kind: 'egress_refused',
    });
    refuseRaw(detached, socket, '403 Forbidden', `agent-harness egress guard: CONNECT ${target} refused\n`);
  });
  // WebSocket upgrades (codex tries them against its default host): refused rather than left hanging.
  server.on('upgrade', (request: IncomingMessage, socket: Duplex) => {
    const target = request.url ?? '/';
    const outbound = /^[a-z][a-z0-9+.-]*:\/\//i.test(target);
    if (outbound) recordEgress(log, request.method ?? 'GET', target);
    recordRequest(log, {
      method: request.method ?? 'GET',
      path: target,
      headers: redactHeaders(request.headers),
      status: outbound ? 403 : 404,
      response_kind: outbound ? 'egress_refused' : 'not_found',
    });
    refuseRaw(
      detached,
      socket,
      outbound ? '403 Forbidden' : '404 Not Found',
      `agent-harness scripted model: upgrade of ${target} refused\n`,
    );
  });
  server.on('clientError', (_error, socket: Socket) => {
    if (socket.writable) socket.end('HTTP/1.1 400 Bad Request\r\nconnection: close\r\n\r\n');
    else socket.destroy();
  });
  return server;
}

/** Listens on 127.0.0.1 at `port` (0: ephemeral); MODEL_SERVER_FAILED when it cannot. */
async function listen(server: http.Server, port: number): Promise<number> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', (error) =>
      reject(
        new AgentHarnessError(
          'MODEL_SERVER_FAILED',
          `Scripted model server could not listen on 127.0.0.1:${port}: ${error.message}`,
          { cause: error, details: { port } },
        ),
      ),
    );
    server.listen(port, '127.0.0.1', () => resolve());
  });
  return (server.address() as AddressInfo).port;
}

/** Opens an attempt lane on the server whose state is `state`. */
function openLane(state: RouterState, laneScript: ModelScript | null | undefined, seq: number): ModelLane {
  const key = `a${seq}-${randomBytes(4).toString('hex')}`;
  const lane = { script: laneScript === undefined ? state.script : laneScript, requests: [] as RecordedRequest[] };
  state.lanes.set(key, lane);
  return {
    key,
    url: `http://127.0.0.1:${state.port}${LANE_PREFIX}${key}`,
    requests: lane.requests,
    get script() {
      return lane.script;
    },
    setScript(next) {
      lane.script = next;
    },
    appendTurns(more) {
      lane.script = withTurns(lane.script, more);
    },
    close() {
      state.lanes.delete(key);
    },
  };
}

/**
 * Starts a scripted model server on 127.0.0.1 serving the tool tables given; MODEL_SERVER_FAILED when it cannot
 * listen.
 */
export async function listenModelServer(options: ModelServerOptions): Promise<ModelServer> {
  const { logFile } = options;
  if (typeof logFile === 'string') fs.mkdirSync(path.dirname(logFile), { recursive: true });
  const lanes: RouterState['lanes'] = new Map();
  const state: RouterState = {
    script: options.script ?? null,
    port: options.port ?? 0,
    lanes,
    toolsOf: toolsByWire(options.tools, tablesOfWire),
    gates: createRouteGates(),
    log: createRequestLog(options, (key) => lanes.get(key)?.requests),
    intercept: options.intercept ?? null,
    stalled: new Set(),
  };
  const detached: Detached = new Set();
  const server = createHttpServer(state, detached);
  state.port = await listen(server, options.port ?? 0);
  let laneSeq = 0;
  let closing: Promise<void> | null = null;
  return {
    url: `http://127.0.0.1:${state.port}`,
    port: state.port,
    requests: state.log.requests,
    egress: state.log.egress,
    get script() {
      return state.script;
    },
    get logError() {
      return state.log.logError;
    },
    setScript(next) {
      state.script = next;
    },
    appendTurns(more) {
      state.script = withTurns(state.script, more);
    },
    openLane(laneScript) {
      laneSeq += 1;
      return openLane(state, laneScript, laneSeq);
    },
    close() {
      closing ??= new Promise<void>((resolve) => {
        state.gates.releaseAll();
        server.close(() => resolve());
        server.closeAllConnections();
        for (const socket of detached) socket.destroy();
        for (const response of state.stalled) response.destroy();
      });
      return closing;
    },
  };
}
