/**
 * The scripted model server: node:http on 127.0.0.1 (never another interface), an ephemeral port by default.
 * Every request gets an answer and a record; nothing hangs. It also acts as the egress guard: engines get
 * their proxy variables pointed here, so a CONNECT or an absolute-URL request to another host is refused (403)
 * and recorded.
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import path from 'node:path';
import type { Duplex } from 'node:stream';
import { AgentHarnessError } from '../errors/index.js';
import { isFaultTurn, respondFault } from './faults.js';
import { exhaustedMessage, matchRoute, selectTurn } from './script-turns.js';
import type { ModelScript, ModelTurn } from './script.js';
import { createRouteGates, type GateRelease } from './route-gate.js';
import type { WireApiHandler, WireApiId, WireRequest } from './wire-api.js';
import { MAX_SHELL_POLLS, tablesOfWire, type EngineToolTable } from './tool-table.js';
import { openAiResponsesWire } from './wire-openai-responses.js';
import { openAiChatWire } from './wire-openai-chat.js';
import { anthropicMessagesWire } from './wire-anthropic-messages.js';
import { geminiWire } from './wire-gemini.js';
import { appendOwnFileSync } from '../runtime/own-file.js';

/** The wire APIs served, in match order. */
export const WIRE_APIS: readonly WireApiHandler[] = [
  openAiResponsesWire,
  openAiChatWire,
  anthropicMessagesWire,
  geminiWire,
];

/** Routes that are not a wire API, listed in the 404 message. */
const HARNESS_ROUTES = [
  'GET /',
  'HEAD /',
  'GET /__harness/requests',
  'any of these under /__attempt/<lane> (an attempt lane)',
];

/**
 * What the server did with a request. `bad_request`: malformed or non-object body; `server_error`: a bug in
 * the server itself (answered 500); `probe`: `GET /` or `HEAD /` warm-up; `poll`: the engine's poll of a shell
 * command that still runs (no script turn used, see `tool-table.ts`).
 */
export type ResponseKind =
  | 'text'
  | 'shell'
  | 'poll'
  | 'final'
  | 'error'
  | 'stall'
  | 'malformed'
  | 'drop'
  | 'exhausted'
  | 'side'
  | 'not_found'
  | 'bad_request'
  | 'egress_refused'
  | 'probe'
  | 'server_error'
  | 'cassette';

/** One recorded request (also one line of the log file). */
export interface RecordedRequest {
  /** 1, 2, 3… in arrival order. */
  seq: number;
  /** ISO time the request was answered. */
  ts: string;
  method: string;
  /** Path without the query string; the full target for egress attempts (`host:443`, `http://…`). */
  path: string;
  /** Wire API that matched, or null (probe, 404, egress). */
  wire: WireApiId | null;
  /** Request headers; credential headers are `[redacted]`. */
  headers: Record<string, string>;
  /** Parsed JSON body, raw text when not JSON, null when empty. */
  body: unknown;
  /** Scripted turn index derived from the history (0-based), null when no turn applied. */
  turn_index: number | null;
  /** HTTP status answered. */
  status: number;
  response_kind: ResponseKind;
  /** For `side`: which bookkeeping call it was (`count_tokens`, `json_schema`, `title`, `structured_output`). */
  side_kind?: string;
  /** ISO time the request arrived (wire requests only): with `ts`, the span it was in flight. */
  started_ts?: string;
  /** How a request on a script route's gate was released (gated routes only). */
  gate?: GateRelease;
  /** The attempt lane the request came through (`/__attempt/<lane>/…`), absent for the server's own routes. */
  lane?: string;
  /** For `cassette`: what the cassette did (`recorded`, `replayed`, `divergent`, `missed`). */
  cassette?: string;
}

/** A refused outbound attempt (CONNECT or absolute URL through the proxy variables). */
export interface EgressAttempt {
  ts: string;
  method: string;
  /** `host:port` for CONNECT, the absolute URL otherwise. */
  target: string;
}

/** Path prefix of an attempt lane: `/__attempt/<key>` before the wire API's own path. */
export const LANE_PREFIX = '/__attempt/';

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

/** Options of {@link startModelServer}. */
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
   * How to call the engines' tools (shell, intents): the tool tables of the engines this server serves. Absent: the
   * tables of every engine in the engine registry, built-in or registered at run time, as the server starts.
   */
  tools?: readonly EngineToolTable[];
  /**
   * Takes each wire request before the script does (a cassette records or replays it): it answers the request and
   * says how, or returns null to leave it to the script (a lenient replay's miss).
   */
  intercept?: WireInterceptor | null;
}

/** A wire request handed to a {@link WireInterceptor}. */
export interface InterceptedRequest {
  wire: WireApiHandler;
  request: WireRequest;
  /** The side request's kind (title, token count…), or null for a model call. */
  sideKind: string | null;
  /** The body as received, decoded (content-encoding undone). */
  rawBody: string;
  response: ServerResponse;
}

/** What an interceptor did: the status it answered and a word for the request log (`recorded`, `replayed`…). */
export interface InterceptOutcome {
  status: number;
  note: string;
}

/** Answers wire requests in place of the script (see {@link ModelServerOptions.intercept}). */
export type WireInterceptor = (call: InterceptedRequest) => Promise<InterceptOutcome | null>;

/**
 * The tool tables of every registered engine. The registry is asked, not imported: the model server sits below the
 * engines and names none of them; the registry loads each engine's small `tools.ts` only.
 */
async function registeredToolTables(): Promise<EngineToolTable[]> {
  const { loadToolTables } = await import('../engines/registry.js');
  return loadToolTables();
}

/** What the server records of a request: a row without its `seq` and `ts`, whose null fields may be left out. */
type RecordEntry = Omit<RecordedRequest, 'seq' | 'ts' | 'wire' | 'body' | 'turn_index' | 'lane'> &
  Partial<Pick<RecordedRequest, 'wire' | 'body' | 'turn_index'>>;

/** Headers whose values are secrets: recorded and logged as `[redacted]`. */
const SECRET_HEADERS = new Set([
  'authorization',
  'x-api-key',
  'cookie',
  'set-cookie',
  'proxy-authorization',
  'x-goog-api-key',
  'api-key',
]);

function redactHeaders(headers: IncomingMessage['headers']): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined) continue;
    out[name] = SECRET_HEADERS.has(name) ? '[redacted]' : Array.isArray(value) ? value.join(', ') : value;
  }
  return out;
}

/** OpenAI-style error `type`/`code` for a scripted error status, so the CLI classifies it as it would live. */
function errorType(status: number): string {
  if (status === 401 || status === 403) return 'invalid_api_key';
  if (status === 404) return 'model_not_found';
  if (status === 429) return 'rate_limit_exceeded';
  if (status === 400) return 'invalid_request_error';
  return 'server_error';
}

/** Reads the body, undoing a `content-encoding` (CLIs may compress large requests). */
async function readBody(request: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  const raw = Buffer.concat(chunks);
  const encoding = String(request.headers['content-encoding'] ?? 'identity')
    .toLowerCase()
    .trim();
  if (raw.length === 0 || encoding === 'identity') return raw.toString('utf8');
  // Loaded here, not at the top: most requests are not compressed, and loading zlib costs a command's only attempt
  // ~2.7 ms before its engine starts (issue 13).
  const zlib = (await import('node:zlib')).default;
  // zstd only exists in newer Node versions; looked up dynamically so Node 20 still type-checks and runs.
  const zstd = (zlib as unknown as { zstdDecompressSync?: (buffer: Buffer) => Buffer }).zstdDecompressSync;
  const decoders: Record<string, ((buffer: Buffer) => Buffer) | undefined> = {
    gzip: zlib.gunzipSync,
    'x-gzip': zlib.gunzipSync,
    deflate: zlib.inflateSync,
    br: zlib.brotliDecompressSync,
    zstd,
  };
  const decode = decoders[encoding];
  if (!decode)
    throw new BodyError(
      `unsupported content-encoding "${encoding}" (served: gzip, deflate, br${zstd ? ', zstd' : ''})`,
    );
  try {
    return decode(raw).toString('utf8');
  } catch (error) {
    throw new BodyError(`request body is not valid ${encoding}: ${(error as Error).message}`);
  }
}

/** A request body the server cannot use: answered 400, recorded as `bad_request`. */
class BodyError extends Error {}

function json(response: ServerResponse, status: number, value: unknown): void {
  response.writeHead(status, { 'content-type': 'application/json' });
  response.end(JSON.stringify(value));
}

/** Parses a body: JSON when declared or when it looks like JSON, else the raw text; null when empty. */
function parseBody(text: string, contentType: string): unknown {
  if (text === '') return null;
  const declared = contentType.includes('json');
  if (!declared && !/^\s*[[{]/.test(text)) return text;
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    if (declared) throw new BodyError(`request body is not valid JSON: ${(error as Error).message}`);
    return text;
  }
}

/** True when an absolute-URL request targets this server itself (a proxy-aware client without NO_PROXY). */
function isSelf(url: URL, port: number): boolean {
  return (
    url.protocol === 'http:' &&
    ['127.0.0.1', 'localhost', '[::1]'].includes(url.hostname) &&
    Number(url.port || 80) === port
  );
}

/** `script` with `more` turns after its last (the default script becomes `more`). */
function withTurns(script: ModelScript | null, more: readonly ModelTurn[]): ModelScript {
  return { ...(script ?? { version: 1 as const }), turns: [...(script?.turns ?? []), ...more] };
}

/** The lane key and the rest of a `/__attempt/<key>/…` path, or null for a path without the prefix. */
function laneOf(pathname: string): { key: string; rest: string } | null {
  if (!pathname.startsWith(LANE_PREFIX)) return null;
  const tail = pathname.slice(LANE_PREFIX.length);
  const slash = tail.indexOf('/');
  const key = slash === -1 ? tail : tail.slice(0, slash);
  return key === '' ? null : { key, rest: slash === -1 ? '/' : tail.slice(slash) };
}

/** Starts a scripted model server on 127.0.0.1; MODEL_SERVER_FAILED when it cannot listen. */
export async function startModelServer(options: ModelServerOptions = {}): Promise<ModelServer> {
  let script = options.script ?? null;
  const tools = options.tools ?? (await registeredToolTables());
  const toolsOf = new Map<WireApiId, EngineToolTable[]>(
    WIRE_APIS.map((wire) => [wire.id, tablesOfWire(tools, wire.id)]),
  );
  const requests: RecordedRequest[] = [];
  const egress: EgressAttempt[] = [];
  /** Open attempt lanes by key: each its own script and request list. */
  const lanes = new Map<string, { script: ModelScript | null; requests: RecordedRequest[] }>();
  let laneSeq = 0;
  let seq = 0;
  /** Responses held open by a `stall` turn; ended by close(). */
  const stalled = new Set<ServerResponse>();
  let port = options.port ?? 0;
  const { logFile } = options;
  let logError: Error | null = null;
  if (typeof logFile === 'string') fs.mkdirSync(path.dirname(logFile), { recursive: true });
  /** Records a request; `wire`, `body` and `turn_index` are null unless given (the row's keys keep their order). */
  const record = (entry: RecordEntry, lane?: string): void => {
    seq += 1;
    const row: RecordedRequest = Object.assign(
      { seq, ts: new Date().toISOString(), method: entry.method, path: entry.path, wire: null, headers: entry.headers },
      { body: null, turn_index: null },
      entry,
      lane === undefined ? {} : { lane },
    );
    requests.push(row);
    if (lane !== undefined) lanes.get(lane)?.requests.push(row);
    // Synchronous on purpose: the line is on disk before the answer goes out, even if the engine is killed next.
    const file = typeof logFile === 'function' ? logFile() : logFile;
    if (!file || logError) return;
    try {
      // Not followed if a symlink, never blocked by a FIFO: an attempt's log lies in the engine's working directory.
      const line = JSON.stringify(row);
      appendOwnFileSync(file, `${options.redactLog ? options.redactLog(line) : line}\n`);
    } catch (error) {
      logError = error instanceof Error ? error : new Error(String(error));
      options.onLogError?.(logError);
    }
  };
  const refuse = (method: string, target: string): void => {
    egress.push({ ts: new Date().toISOString(), method, target });
  };

  const gates = createRouteGates();
  const handle = async (request: IncomingMessage, response: ServerResponse): Promise<void> => {
    const startedTs = new Date().toISOString();
    const method = request.method ?? 'GET';
    const rawUrl = request.url ?? '/';
    const headers = redactHeaders(request.headers);
    let url: URL;
    if (/^[a-z][a-z0-9+.-]*:\/\//i.test(rawUrl)) {
      url = new URL(rawUrl);
      if (!isSelf(url, port)) {
        refuse(method, rawUrl);
        request.resume();
        record({ method, path: rawUrl, headers, status: 403, response_kind: 'egress_refused' });
        json(response, 403, {
          error: {
            message: `agent-harness egress guard: outbound request to ${rawUrl} refused`,
            type: 'egress_refused',
            code: 'egress_refused',
          },
        });
        return;
      }
    } else {
      url = new URL(rawUrl, 'http://127.0.0.1');
    }
    const laned = laneOf(url.pathname);
    if (laned && !lanes.has(laned.key)) {
      request.resume();
      record({ method, path: url.pathname, headers, status: 404, response_kind: 'not_found' });
      json(response, 404, {
        error: {
          message: `agent-harness scripted model: no open attempt lane "${laned.key}" (${method} ${url.pathname}); the attempt that opened it has ended, or its base URL was not made by openLane()`,
          type: 'not_found',
          code: 'not_found',
        },
      });
      return;
    }
    const lane = laned ? lanes.get(laned.key)! : null;
    /** Records a request of this lane (or of the server). */
    const note = (entry: RecordEntry): void => record(entry, laned?.key);
    /** The script in force now for this request: the lane's, else the server's (read when used, as it may change). */
    const active = (): ModelScript | null => (lane ? lane.script : script);
    const where = laned ? laned.rest : url.pathname;
    let body: unknown;
    let rawBody = '';
    try {
      rawBody = await readBody(request);
      body = parseBody(rawBody, String(request.headers['content-type'] ?? ''));
    } catch (error) {
      if (!(error instanceof BodyError)) throw error;
      note({ method, path: where, headers, status: 400, response_kind: 'bad_request' });
      json(response, 400, {
        error: { message: error.message, type: 'invalid_request_error', code: 'invalid_request_error' },
      });
      return;
    }
    if ((method === 'HEAD' || method === 'GET') && where === '/') {
      note({ method, path: where, headers, status: 200, response_kind: 'probe' });
      response.writeHead(200, { 'content-type': 'text/plain' });
      response.end(method === 'HEAD' ? undefined : 'agent-harness scripted model\n');
      return;
    }
    if (method === 'GET' && where === '/__harness/requests') {
      // Introspection for the standalone server; not recorded, so the list describes only engine traffic. Under a
      // lane, that lane's requests only; at the root, no lane's key (a key is what lets a request into a lane).
      json(response, 200, lane ? lane.requests : requests.map(({ lane: _key, ...request }) => request));
      return;
    }
    const wireRequest: WireRequest = { method, path: where, query: url.searchParams, headers: request.headers, body };
    const wire = WIRE_APIS.find((candidate) => candidate.matches(wireRequest));
    if (wire) wireRequest.tools = toolsOf.get(wire.id) ?? [];
    if (!wire) {
      note({ method, path: where, headers, body, status: 404, response_kind: 'not_found' });
      const served = [...WIRE_APIS.flatMap((w) => w.paths), ...HARNESS_ROUTES].join(', ');
      json(response, 404, {
        error: {
          message: `agent-harness scripted model: no route for ${method} ${where}; served: ${served}`,
          type: 'not_found',
          code: 'not_found',
        },
      });
      return;
    }
    if (body === null || typeof body !== 'object' || Array.isArray(body)) {
      note({ method, path: where, wire: wire.id, headers, body, status: 400, response_kind: 'bad_request' });
      wire.respondError(response, 400, 'request body must be a JSON object', 'invalid_request_error');
      return;
    }
    /** Records this wire request with `fields` (what became of it). */
    const noteWire = (fields: Omit<RecordEntry, 'method' | 'path' | 'wire' | 'headers' | 'body'>): void =>
      note({ method, path: where, wire: wire.id, headers, body, ...fields });
    // Side requests first: they must neither use up a scripted turn nor get a scripted turn's error.
    const side = wire.sideRequestKind?.(wireRequest) ?? null;
    const intercepted = options.intercept
      ? await options.intercept({ wire, request: wireRequest, sideKind: side, rawBody, response })
      : null;
    if (intercepted) {
      noteWire({
        turn_index: wire.countModelTurns(body),
        status: intercepted.status,
        response_kind: 'cassette',
        ...(side ? { side_kind: side } : {}),
        cassette: intercepted.note,
        started_ts: startedTs,
      });
      return;
    }
    if (side) {
      noteWire({
        status: 200,
        response_kind: 'side',
        side_kind: side,
        started_ts: startedTs,
      });
      wire.respond(wireRequest, { type: 'text', text: '' }, response);
      return;
    }
    // A shell turn's command still running: poll it (the engine's own way) rather than answer the next turn.
    const pending = wire.pendingPoll?.(wireRequest) ?? null;
    if (pending && wire.respondPoll && pending.polls < MAX_SHELL_POLLS) {
      const shell = selectTurn(active(), pending.turnIndex, body, wireRequest.tools);
      if (shell.kind === 'turn' && shell.turn.type === 'shell' && shell.turn.wait !== false) {
        noteWire({ turn_index: pending.turnIndex, status: 200, response_kind: 'poll', started_ts: startedTs });
        wire.respondPoll(wireRequest, pending, response);
        return;
      }
    }
    // Routes and gates (script `routes`): the turn list is chosen by request content; a gate holds the request.
    const gate = await gates.pass(matchRoute(active(), body));
    const timing = { started_ts: startedTs, ...(gate ? { gate } : {}) };
    const selection = selectTurn(active(), wire.countModelTurns(body), body, wireRequest.tools);
    if (selection.kind === 'exhausted') {
      // 400, not 5xx: CLIs retry 5xx, and a retry cannot make the script longer.
      noteWire({
        turn_index: selection.index,
        status: 400,
        response_kind: 'exhausted',
        ...timing,
      });
      const message = exhaustedMessage(selection.index, selection.total, {
        script: active(),
        request: { method, path: where, wire: wire.id, body },
      });
      wire.respondError(response, 400, message, 'script_exhausted');
      return;
    }
    const { turn } = selection;
    if (turn.type === 'error') {
      noteWire({
        turn_index: selection.index,
        status: turn.status,
        response_kind: 'error',
        ...timing,
      });
      // A scripted error answers every retry the same way (turn selection is stateless), so waiting between
      // retries only delays the verdict: `retry-after-ms: 0` makes clients that honour it (opencode's session
      // loop and its AI SDK, 5 attempts with 2–30 s backoff otherwise) give up at once.
      response.setHeader('retry-after-ms', '0');
      wire.respondError(response, turn.status, turn.message, errorType(turn.status));
      return;
    }
    noteWire({ turn_index: selection.index, status: 200, response_kind: turn.type, ...timing });
    if (isFaultTurn(turn))
      respondFault(turn, { body, query: url.searchParams, path: where, raw: request }, response, stalled);
    else wire.respond(wireRequest, turn, response);
  };

  /** Sockets taken over from HTTP (CONNECT, upgrade): closeAllConnections() no longer sees them. */
  const detached = new Set<Duplex>();
  const refuseRaw = (socket: Duplex, status: string, text: string): void => {
    detached.add(socket);
    socket.on('error', () => undefined);
    socket.on('close', () => detached.delete(socket));
    socket.end(
      `HTTP/1.1 ${status}\r\ncontent-type: text/plain\r\ncontent-length: ${Buffer.byteLength(text)}\r\nconnection: close\r\n\r\n${text}`,
    );
  };

  const server = http.createServer((request, response) => {
    handle(request, response).catch((error: unknown) => {
      const message = `agent-harness scripted model failed: ${(error as Error).message}`;
      try {
        record({
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
    refuse('CONNECT', target);
    record({
      method: 'CONNECT',
      path: target,
      headers: redactHeaders(request.headers),
      status: 403,
      response_kind: 'egress_refused',
    });
    refuseRaw(socket, '403 Forbidden', `agent-harness egress guard: CONNECT ${target} refused\n`);
  });
  // WebSocket upgrades (codex tries them against its default host): refused rather than left hanging.
  server.on('upgrade', (request: IncomingMessage, socket: Duplex) => {
    const target = request.url ?? '/';
    const outbound = /^[a-z][a-z0-9+.-]*:\/\//i.test(target);
    if (outbound) refuse(request.method ?? 'GET', target);
    record({
      method: request.method ?? 'GET',
      path: target,
      headers: redactHeaders(request.headers),
      status: outbound ? 403 : 404,
      response_kind: outbound ? 'egress_refused' : 'not_found',
    });
    refuseRaw(
      socket,
      outbound ? '403 Forbidden' : '404 Not Found',
      `agent-harness scripted model: upgrade of ${target} refused\n`,
    );
  });
  server.on('clientError', (_error, socket: Socket) => {
    if (socket.writable) socket.end('HTTP/1.1 400 Bad Request\r\nconnection: close\r\n\r\n');
    else socket.destroy();
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', (error) =>
      reject(
        new AgentHarnessError(
          'MODEL_SERVER_FAILED',
          `Scripted model server could not listen on 127.0.0.1:${options.port ?? 0}: ${error.message}`,
          { cause: error, details: { port: options.port ?? 0 } },
        ),
      ),
    );
    server.listen(options.port ?? 0, '127.0.0.1', () => resolve());
  });
  port = (server.address() as AddressInfo).port;
  let closing: Promise<void> | null = null;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    requests,
    egress,
    get script() {
      return script;
    },
    get logError() {
      return logError;
    },
    setScript(next) {
      script = next;
    },
    appendTurns(more) {
      script = withTurns(script, more);
    },
    openLane(laneScript) {
      laneSeq += 1;
      const key = `a${laneSeq}-${randomBytes(4).toString('hex')}`;
      const lane = { script: laneScript === undefined ? script : laneScript, requests: [] as RecordedRequest[] };
      lanes.set(key, lane);
      return {
        key,
        url: `http://127.0.0.1:${port}${LANE_PREFIX}${key}`,
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
          lanes.delete(key);
        },
      };
    },
    close() {
      closing ??= new Promise<void>((resolve) => {
        gates.releaseAll();
        server.close(() => resolve());
        server.closeAllConnections();
        for (const socket of detached) socket.destroy();
        for (const response of stalled) response.destroy();
      });
      return closing;
    },
  };
}
