/**
 * The scripted model server: node:http on 127.0.0.1 (never another interface), an ephemeral port by default.
 * Every request gets an answer and a record; nothing hangs. It also acts as the egress guard: engines get
 * their proxy variables pointed here, so a CONNECT or an absolute-URL request is refused (403) and recorded.
 */
import fs from 'node:fs';
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { AgentHarnessError } from '../errors/index.js';
import type { WireApi } from '../engines/engine.js';
import { selectTurn, type ModelScript } from './script.js';
import type { WireApiHandler, WireRequest } from './wire-api.js';
import { openAiResponsesWire } from './wire-openai-responses.js';

/** The wire APIs served, in match order. */
export const WIRE_APIS: readonly WireApiHandler[] = [openAiResponsesWire];

/** What the server did with a request. */
export type ResponseKind = 'text' | 'shell' | 'final' | 'error' | 'exhausted' | 'not_found' | 'bad_request' | 'egress_refused' | 'probe' | 'introspection';

/** One recorded request. */
export interface RecordedRequest {
  seq: number;
  ts: string;
  method: string;
  path: string;
  wire: WireApi | null;
  headers: Record<string, string>;
  body: unknown;
  turn_index: number | null;
  status: number;
  response_kind: ResponseKind;
}

/** A refused outbound attempt (CONNECT or absolute URL through the proxy variables). */
export interface EgressAttempt {
  ts: string;
  method: string;
  target: string;
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
  /** Replaces the script (null = default replies). */
  setScript(script: ModelScript | null): void;
  /** Stops listening and closes every connection; safe to call twice. */
  close(): Promise<void>;
}

/** Options of {@link startModelServer}. */
export interface ModelServerOptions {
  script?: ModelScript | null;
  /** 0 (default) = ephemeral. */
  port?: number;
  /** Appends each recorded request (and egress attempt) as a JSON line. */
  logFile?: string;
}

const SECRET_HEADERS = new Set(['authorization', 'x-api-key', 'cookie', 'proxy-authorization', 'x-goog-api-key', 'api-key']);

function redactHeaders(headers: IncomingMessage['headers']): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined) continue;
    out[name] = SECRET_HEADERS.has(name) ? '[redacted]' : Array.isArray(value) ? value.join(', ') : value;
  }
  return out;
}

function errorType(status: number): string {
  if (status === 401 || status === 403) return 'invalid_api_key';
  if (status === 404) return 'model_not_found';
  if (status === 429) return 'rate_limit_exceeded';
  if (status === 400) return 'invalid_request_error';
  return 'server_error';
}

async function readBody(request: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

function json(response: ServerResponse, status: number, value: unknown): void {
  response.writeHead(status, { 'content-type': 'application/json' });
  response.end(JSON.stringify(value));
}

/** Starts a scripted model server on 127.0.0.1. */
export async function startModelServer(options: ModelServerOptions = {}): Promise<ModelServer> {
  let script = options.script ?? null;
  const requests: RecordedRequest[] = [];
  const egress: EgressAttempt[] = [];
  let seq = 0;
  if (options.logFile) fs.mkdirSync(path.dirname(options.logFile), { recursive: true });
  const log = (row: unknown): void => {
    if (options.logFile) fs.appendFileSync(options.logFile, `${JSON.stringify(row)}\n`);
  };
  const record = (entry: Omit<RecordedRequest, 'seq' | 'ts'>): void => {
    seq += 1;
    const row: RecordedRequest = { seq, ts: new Date().toISOString(), ...entry };
    requests.push(row);
    log(row);
  };
  const refuse = (method: string, target: string): void => {
    const row = { ts: new Date().toISOString(), method, target };
    egress.push(row);
    log({ egress: row });
  };

  const handle = async (request: IncomingMessage, response: ServerResponse): Promise<void> => {
    const method = request.method ?? 'GET';
    const rawUrl = request.url ?? '/';
    const headers = redactHeaders(request.headers);
    if (/^[a-z]+:\/\//i.test(rawUrl)) {
      refuse(method, rawUrl);
      await readBody(request).catch(() => '');
      record({ method, path: rawUrl, wire: null, headers, body: null, turn_index: null, status: 403, response_kind: 'egress_refused' });
      json(response, 403, { error: { message: `agent-harness egress guard: outbound request to ${rawUrl} refused`, type: 'egress_refused' } });
      return;
    }
    const url = new URL(rawUrl, 'http://127.0.0.1');
    const text = await readBody(request);
    let body: unknown = text === '' ? null : text;
    if (text !== '' && (request.headers['content-type'] ?? '').includes('json')) {
      try {
        body = JSON.parse(text);
      } catch {
        record({ method, path: url.pathname, wire: null, headers, body: text.slice(0, 4096), turn_index: null, status: 400, response_kind: 'bad_request' });
        json(response, 400, { error: { message: 'request body is not valid JSON', type: 'invalid_request_error' } });
        return;
      }
    }
    if ((method === 'HEAD' || method === 'GET') && url.pathname === '/') {
      record({ method, path: url.pathname, wire: null, headers, body: null, turn_index: null, status: 200, response_kind: 'probe' });
      response.writeHead(200, { 'content-type': 'text/plain' });
      response.end(method === 'HEAD' ? undefined : 'agent-harness scripted model\n');
      return;
    }
    if (method === 'GET' && url.pathname === '/__harness/requests') {
      json(response, 200, requests);
      return;
    }
    const wireRequest: WireRequest = { method, path: url.pathname, query: url.searchParams, headers: request.headers, body };
    const wire = WIRE_APIS.find((candidate) => candidate.matches(wireRequest));
    if (!wire) {
      record({ method, path: url.pathname, wire: null, headers, body, turn_index: null, status: 404, response_kind: 'not_found' });
      json(response, 404, { error: { message: `agent-harness scripted model: no route for ${method} ${url.pathname}; served: ${WIRE_APIS.flatMap((w) => w.paths).join(', ')}`, type: 'not_found' } });
      return;
    }
    if (body === null || typeof body !== 'object') {
      record({ method, path: url.pathname, wire: wire.id, headers, body, turn_index: null, status: 400, response_kind: 'bad_request' });
      wire.respondError(response, 400, 'request body must be a JSON object', 'invalid_request_error');
      return;
    }
    const selection = selectTurn(script, wire.countModelTurns(body));
    if (selection.kind === 'exhausted') {
      const message = `script exhausted: request needs turn ${selection.index + 1} but the script has ${selection.total} turns`;
      record({ method, path: url.pathname, wire: wire.id, headers, body, turn_index: selection.index, status: 400, response_kind: 'exhausted' });
      wire.respondError(response, 400, message, 'script_exhausted');
      return;
    }
    const { turn } = selection;
    if (turn.type === 'error') {
      record({ method, path: url.pathname, wire: wire.id, headers, body, turn_index: selection.index, status: turn.status, response_kind: 'error' });
      wire.respondError(response, turn.status, turn.message, errorType(turn.status));
      return;
    }
    record({ method, path: url.pathname, wire: wire.id, headers, body, turn_index: selection.index, status: 200, response_kind: turn.type });
    wire.respond(wireRequest, turn, response);
  };

  const server = http.createServer((request, response) => {
    handle(request, response).catch((error: unknown) => {
      if (!response.headersSent) json(response, 500, { error: { message: `agent-harness scripted model failed: ${(error as Error).message}`, type: 'server_error' } });
      else response.end();
    });
  });
  server.on('connect', (request: IncomingMessage, socket) => {
    const target = request.url ?? '';
    refuse('CONNECT', target);
    record({ method: 'CONNECT', path: target, wire: null, headers: redactHeaders(request.headers), body: null, turn_index: null, status: 403, response_kind: 'egress_refused' });
    socket.end('HTTP/1.1 403 Forbidden\r\ncontent-type: text/plain\r\nconnection: close\r\n\r\nagent-harness egress guard: refused\n');
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', (error) => reject(new AgentHarnessError('MODEL_SERVER_FAILED', `Scripted model server could not listen on 127.0.0.1:${options.port ?? 0}: ${error.message}`, { cause: error })));
    server.listen(options.port ?? 0, '127.0.0.1', () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  let closing: Promise<void> | null = null;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    requests,
    egress,
    setScript(next) {
      script = next;
    },
    close() {
      closing ??= new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      return closing;
    },
  };
}
