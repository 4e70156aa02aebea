/**
 * The model server's router: what one HTTP request gets. An absolute URL to another host is refused (the egress
 * guard); a lane's path is answered from the lane's script; `GET /` is a probe; a wire API's path is taken by a
 * cassette's interceptor or answered from the script in force (side requests, shell polls, route gates, turns,
 * errors, faults); anything else is a 404 naming what is served. Every request is recorded (request-log.ts).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { isFaultTurn, respondFault } from './faults.js';
import { type RecordEntry, type RequestLog, recordEgress, recordRequest, redactHeaders } from './request-log.js';
import type { RouteGates } from './route-gate.js';
import { exhaustedMessage, matchRoute, selectTurn } from './script-turns.js';
import type { ModelScript } from './script.js';
import { type EngineToolTable, MAX_SHELL_POLLS } from './tool-table.js';
import type { WireApiHandler, WireApiId, WireRequest } from './wire-api.js';
import { anthropicMessagesWire } from './wire-anthropic-messages.js';
import { geminiWire } from './wire-gemini.js';
import { openAiChatWire } from './wire-openai-chat.js';
import { openAiResponsesWire } from './wire-openai-responses.js';

/** The wire APIs served, in match order. */
export const WIRE_APIS: readonly WireApiHandler[] = [
  openAiResponsesWire,
  openAiChatWire,
  anthropicMessagesWire,
  geminiWire,
];

/** Path prefix of an attempt lane: `/__attempt/<key>` before the wire API's own path. */
export const LANE_PREFIX = '/__attempt/';

/** Routes that are not a wire API, listed in the 404 message. */
const HARNESS_ROUTES = [
  'GET /',
  'HEAD /',
  'GET /__harness/requests',
  'any of these under /__attempt/<lane> (an attempt lane)',
];

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

/** Answers wire requests in place of the script (see `ModelServerOptions.intercept`). */
export type WireInterceptor = (call: InterceptedRequest) => Promise<InterceptOutcome | null>;

/** An open attempt lane: its own script and request list. */
export interface LaneState {
  script: ModelScript | null;
  requests: import('./request-log.js').RecordedRequest[];
}

/** What the router reads and records: the server's state, explicit. */
export interface RouterState {
  /** The server's script in force (null: the default replies). */
  script: ModelScript | null;
  /** The port listened on (0 until it listens). */
  port: number;
  lanes: Map<string, LaneState>;
  /** The tool tables of each wire API's engines. */
  toolsOf: ReadonlyMap<WireApiId, EngineToolTable[]>;
  gates: RouteGates;
  log: RequestLog;
  intercept: WireInterceptor | null;
  /** Responses held open by a `stall` turn; ended when the server closes. */
  stalled: Set<ServerResponse>;
}

/** The tool tables of each wire API, from the tables given to the server. */
export function toolsByWire(
  tools: readonly EngineToolTable[],
  tablesOfWire: (tools: readonly EngineToolTable[], wire: WireApiId) => EngineToolTable[],
): Map<WireApiId, EngineToolTable[]> {
  return new Map(WIRE_APIS.map((wire) => [wire.id, tablesOfWire(tools, wire.id)]));
}

/** One request as the router sees it once its target is known. */
interface Routed {
  request: IncomingMessage;
  response: ServerResponse;
  method: string;
  url: URL;
  headers: Record<string, string>;
  startedTs: string;
  lane: LaneState | null;
  laneKey: string | undefined;
  /** The path under the lane (the path itself outside one). */
  where: string;
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

/** Answers `value` as JSON with `status`. */
export function json(response: ServerResponse, status: number, value: unknown): void {
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

/** The lane key and the rest of a `/__attempt/<key>/…` path, or null for a path without the prefix. */
function laneOf(pathname: string): { key: string; rest: string } | null {
  if (!pathname.startsWith(LANE_PREFIX)) return null;
  const tail = pathname.slice(LANE_PREFIX.length);
  const slash = tail.indexOf('/');
  const key = slash === -1 ? tail : tail.slice(0, slash);
  return key === '' ? null : { key, rest: slash === -1 ? '/' : tail.slice(slash) };
}

/**
 * Where a request goes: refused (an absolute URL to another host; a lane that is not open) and answered here, or
 * its URL, lane and path.
 */
function routeOf(state: RouterState, request: IncomingMessage, response: ServerResponse): Routed | null {
  const startedTs = new Date().toISOString();
  const method = request.method ?? 'GET';
  const rawUrl = request.url ?? '/';
  const headers = redactHeaders(request.headers);
  let url: URL;
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(rawUrl)) {
    url = new URL(rawUrl);
    if (!isSelf(url, state.port)) {
      recordEgress(state.log, method, rawUrl);
      request.resume();
      recordRequest(state.log, { method, path: rawUrl, headers, status: 403, response_kind: 'egress_refused' });
      json(response, 403, {
        error: {
          message: `agent-harness egress guard: outbound request to ${rawUrl} refused`,
          type: 'egress_refused',
          code: 'egress_refused',
        },
      });
      return null;
    }
  } else {
    url = new URL(rawUrl, 'http://127.0.0.1');
  }
  const laned = laneOf(url.pathname);
  if (laned && !state.lanes.has(laned.key)) {
    request.resume();
    recordRequest(state.log, { method, path: url.pathname, headers, status: 404, response_kind: 'not_found' });
    json(response, 404, {
      error: {
        message: `agent-harness scripted model: no open attempt lane "${laned.key}" (${method} ${url.pathname}); the attempt that opened it has ended, or its base URL was not made by openLane()`,
        type: 'not_found',
        code: 'not_found',
      },
    });
    return null;
  }
  const lane = laned ? (state.lanes.get(laned.key) ?? null) : null;
  const where = laned ? laned.rest : url.pathname;
  return { request, response, method, url, headers, startedTs, lane, laneKey: laned?.key, where };
}

/** Records a request of the routed request's lane (or of the server). */
function note(state: RouterState, routed: Routed, entry: RecordEntry): void {
  recordRequest(state.log, entry, routed.laneKey);
}

/** The script in force now for this request: the lane's, else the server's (read when used, as it may change). */
function active(state: RouterState, routed: Routed): ModelScript | null {
  return routed.lane ? routed.lane.script : state.script;
}

/** Answers the harness's own routes (`GET /`, `HEAD /`, the request list); false for any other path. */
function answerHarnessRoute(state: RouterState, routed: Routed): boolean {
  const { method, where, headers, response, lane } = routed;
  if ((method === 'HEAD' || method === 'GET') && where === '/') {
    note(state, routed, { method, path: where, headers, status: 200, response_kind: 'probe' });
    response.writeHead(200, { 'content-type': 'text/plain' });
    response.end(method === 'HEAD' ? undefined : 'agent-harness scripted model\n');
    return true;
  }
  if (method === 'GET' && where === '/__harness/requests') {
    // Introspection for the standalone server; not recorded, so the list describes only engine traffic. Under a
    // lane, that lane's requests only; at the root, no lane's key (a key is what lets a request into a lane).
    json(response, 200, lane ? lane.requests : state.log.requests.map(({ lane: _key, ...request }) => request));
    return true;
  }
  return false;
}

/** Answers one request; rejects only for a bug in the server (answered 500 by the server). */
export async function handleRequest(
  state: RouterState,
  request: IncomingMessage,
  response: ServerResponse,
): Promise<void> {
  const routed = routeOf(state, request, response);
  if (!routed) return;
  const { method, where, headers } = routed;
  let body: unknown;
  let rawBody = '';
  try {
    rawBody = await readBody(request);
    body = parseBody(rawBody, String(request.headers['content-type'] ?? ''));
  } catch (error) {
    if (!(error instanceof BodyError)) throw error;
    note(state, routed, { method, path: where, headers, status: 400, response_kind: 'bad_request' });
    json(response, 400, {
      error: { message: error.message, type: 'invalid_request_error', code: 'invalid_request_error' },
    });
    return;
  }
  if (answerHarnessRoute(state, routed)) return;
  const wireRequest: WireRequest = {
    method,
    path: where,
    query: routed.url.searchParams,
    headers: request.headers,
    body,
  };
  const wire = WIRE_APIS.find((candidate) => candidate.matches(wireRequest));
  if (!wire) {
    note(state, routed, { method, path: where, headers, body, status: 404, response_kind: 'not_found' });
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
  wireRequest.tools = state.toolsOf.get(wire.id) ?? [];
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    note(state, routed, {
      method,
      path: where,
      wire: wire.id,
      headers,
      body,
      status: 400,
      response_kind: 'bad_request',
    });
    wire.respondError(response, 400, 'request body must be a JSON object', 'invalid_request_error');
    return;
  }
  await answerWire(state, routed, wire, wireRequest, rawBody);
}

/** What became of a wire request, recorded. */
type WireNote = (fields: Omit<RecordEntry, 'method' | 'path' | 'wire' | 'headers' | 'body'>) => void;

/** Answers a wire request: a cassette's, a side request's empty answer, a shell poll, or the script's turn. */
async function answerWire(
  state: RouterState,
  routed: Routed,
  wire: WireApiHandler,
  wireRequest: WireRequest,
  rawBody: string,
): Promise<void> {
  const { method, where, headers, response, startedTs } = routed;
  const body = wireRequest.body;
  const noteWire: WireNote = (fields) =>
    note(state, routed, { method, path: where, wire: wire.id, headers, body, ...fields });
  // Side requests first: they must neither use up a scripted turn nor get a scripted turn's error.
  const side = wire.sideRequestKind?.(wireRequest) ?? null;
  const intercepted = state.intercept
    ? await state.intercept({ wire, request: wireRequest, sideKind: side, rawBody, response })
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
    noteWire({ status: 200, response_kind: 'side', side_kind: side, started_ts: startedTs });
    wire.respond(wireRequest, { type: 'text', text: '' }, response);
    return;
  }
  // A shell turn's command still running: poll it (the engine's own way) rather than answer the next turn.
  const pending = wire.pendingPoll?.(wireRequest) ?? null;
  if (pending && wire.respondPoll && pending.polls < MAX_SHELL_POLLS) {
    const shell = selectTurn(active(state, routed), pending.turnIndex, body, wireRequest.tools);
    if (shell.kind === 'turn' && shell.turn.type === 'shell' && shell.turn.wait !== false) {
      noteWire({ turn_index: pending.turnIndex, status: 200, response_kind: 'poll', started_ts: startedTs });
      wire.respondPoll(wireRequest, pending, response);
      return;
    }
  }
  await answerTurn(state, routed, wire, wireRequest, noteWire);
}

/** Answers a model call from the script in force: its turn, its error, a fault, or the script's end. */
async function answerTurn(
  state: RouterState,
  routed: Routed,
  wire: WireApiHandler,
  wireRequest: WireRequest,
  noteWire: WireNote,
): Promise<void> {
  const { method, where, response, startedTs } = routed;
  const body = wireRequest.body;
  // Routes and gates (script `routes`): the turn list is chosen by request content; a gate holds the request.
  const gate = await state.gates.pass(matchRoute(active(state, routed), body));
  const timing = { started_ts: startedTs, ...(gate ? { gate } : {}) };
  const selection = selectTurn(active(state, routed), wire.countModelTurns(body), body, wireRequest.tools);
  if (selection.kind === 'exhausted') {
    // 400, not 5xx: CLIs retry 5xx, and a retry cannot make the script longer.
    noteWire({ turn_index: selection.index, status: 400, response_kind: 'exhausted', ...timing });
    const message = exhaustedMessage(selection.index, selection.total, {
      script: active(state, routed),
      request: { method, path: where, wire: wire.id, body },
    });
    wire.respondError(response, 400, message, 'script_exhausted');
    return;
  }
  const { turn } = selection;
  if (turn.type === 'error') {
    noteWire({ turn_index: selection.index, status: turn.status, response_kind: 'error', ...timing });
    // A scripted error answers every retry the same way (turn selection is stateless), so waiting between
    // retries only delays the verdict: a wait of 1 ms makes clients that honour `retry-after-ms` (opencode's
    // session loop and its AI SDK, 5 attempts with 2–30 s backoff otherwise; qwen 0.24.4's main chat path, 7
    // attempts from 1.5 s doubling to 30 s, about 80 s) spend their retries at once. Not 0: qwen reads 0 as no
    // hint and backs off as without one.
    response.setHeader('retry-after-ms', '1');
    wire.respondError(response, turn.status, turn.message, errorType(turn.status));
    return;
  }
  noteWire({ turn_index: selection.index, status: 200, response_kind: turn.type, ...timing });
  if (isFaultTurn(turn))
    respondFault(
      turn,
      { body, query: routed.url.searchParams, path: where, raw: routed.request },
      response,
      state.stalled,
    );
  else wire.respond(wireRequest, turn, response);
}
