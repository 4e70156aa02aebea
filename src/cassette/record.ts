/**
 * Recording: a wire request the engine sent to the harness's model server is forwarded, path kept, to the upstream
 * origin (the vendor, or `--upstream`), with the user's real key in place of the placeholder the engine holds. The
 * response streams through to the engine as it arrives, and is captured: status, allow-listed headers, and the body in
 * its chunks with the delay before each. The harness process makes the upstream call; the engine never leaves its
 * namespace.
 */
import http, { type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import https from 'node:https';
import { AgentHarnessError } from '../errors/index.js';
import { anthropicMessagesWire } from '../model/wire-anthropic-messages.js';
import type { WireApiHandler, WireApiId, WireUpstream } from '../model/wire-api.js';
import { geminiWire } from '../model/wire-gemini.js';
import { openAiChatWire } from '../model/wire-openai-chat.js';
import { openAiResponsesWire } from '../model/wire-openai-responses.js';
import { CREDENTIAL_HEADERS } from './redact.js';
import type { CassetteChunk } from './schema.js';

/** The wire APIs a recording forwards, by id: each module owns its upstream (origin, key variables, auth header). */
const WIRES: Readonly<Record<WireApiId, WireApiHandler>> = {
  'openai-responses': openAiResponsesWire,
  'openai-chat': openAiChatWire,
  'anthropic-messages': anthropicMessagesWire,
  gemini: geminiWire,
};

/** `pick` of every wire's upstream, by wire id. */
function byWire<T>(pick: (upstream: WireUpstream) => T): Readonly<Record<WireApiId, T>> {
  return Object.fromEntries(Object.values(WIRES).map((wire) => [wire.id, pick(wire.upstream)])) as Record<WireApiId, T>;
}

/** The vendor origin of each wire API (used when no upstream is given), from the wire modules. */
export const DEFAULT_UPSTREAMS: Readonly<Record<WireApiId, string>> = byWire((upstream) => upstream.origin);

/** The variables a wire API's key is read from, in order, from the wire modules. */
export const KEY_VARIABLES: Readonly<Record<WireApiId, readonly string[]>> = byWire(
  (upstream) => upstream.keyVariables,
);

/** The user's key for `wire` from `env`, with the variable it came from; null when none is set. */
export function vendorKey(wire: WireApiId, env: NodeJS.ProcessEnv): { name: string; value: string } | null {
  for (const name of KEY_VARIABLES[wire]) {
    const value = env[name];
    if (value) return { name, value };
  }
  return null;
}

/** Response headers kept in a cassette and replayed. */
const RESPONSE_HEADER_ALLOWLIST: ReadonlySet<string> = new Set([
  'content-type',
  'retry-after',
  'retry-after-ms',
  'x-should-retry',
]);

/** Request headers never forwarded (hop-by-hop, or recomputed). */
const NOT_FORWARDED: ReadonlySet<string> = new Set([
  'host',
  'connection',
  'keep-alive',
  'content-length',
  'content-encoding',
  'accept-encoding',
  'transfer-encoding',
  'te',
  'upgrade',
  'proxy-connection',
  'proxy-authorization',
]);

/** Response headers never passed back to the engine. */
const NOT_RETURNED: ReadonlySet<string> = new Set([
  'connection',
  'keep-alive',
  'transfer-encoding',
  'content-length',
  'set-cookie',
]);

/** What one forwarded request produced. */
export interface CapturedResponse {
  status: number;
  headers: Record<string, string>;
  kind: 'sse' | 'json' | 'text';
  chunks: CassetteChunk[];
  complete: boolean;
}

/** The headers sent upstream: the engine's, its placeholder credential replaced by the user's key. */
function upstreamHeaders(wire: WireApiId, incoming: IncomingHttpHeaders, key: string, bodyBytes: number) {
  const out: Record<string, string> = {};
  let keyed = false;
  for (const [name, raw] of Object.entries(incoming)) {
    if (raw === undefined || NOT_FORWARDED.has(name)) continue;
    const value = Array.isArray(raw) ? raw.join(', ') : raw;
    if (name === 'authorization') {
      out[name] = `Bearer ${key}`;
      keyed = true;
    } else if (name === 'x-api-key' || name === 'x-goog-api-key' || name === 'api-key') {
      out[name] = key;
      keyed = true;
    } else if (!CREDENTIAL_HEADERS.has(name)) out[name] = value;
  }
  if (!keyed) {
    const header = WIRES[wire].upstream.authHeader;
    out[header] = header === 'authorization' ? `Bearer ${key}` : key;
  }
  out['accept-encoding'] = 'identity';
  out['content-length'] = String(bodyBytes);
  return out;
}

/** The upstream URL of a request: the origin's path prefix, then the request's path and query (`key` replaced). */
export function upstreamUrl(origin: string, requestPath: string, query: URLSearchParams, key: string): URL {
  const base = new URL(origin);
  const url = new URL(`${base.pathname.replace(/\/$/, '')}${requestPath}`, base);
  for (const [name, value] of query) url.searchParams.append(name, name === 'key' ? key : value);
  return url;
}

/** Options of {@link forwardRequest}. */
export interface ForwardOptions {
  wire: WireApiId;
  origin: string;
  method: string;
  path: string;
  query: URLSearchParams;
  headers: IncomingHttpHeaders;
  body: string;
  key: string;
  /** The engine's response: written as the upstream's arrives. */
  response: ServerResponse;
}

/**
 * Forwards one request upstream and streams the answer to the engine while capturing it. CASSETTE_UPSTREAM_FAILED
 * when the upstream cannot be reached (the engine then gets a 502 in its wire's error shape from the caller). When the
 * engine closes its connection first, the upstream call is dropped and what was captured so far comes back as the
 * answer, or null when the upstream had not answered yet: the engine's choice, not the upstream's failure (codex closes
 * its connection as soon as it has read `response.completed`, sometimes before the upstream ends the response).
 */
export function forwardRequest(options: ForwardOptions): Promise<CapturedResponse | null> {
  const url = upstreamUrl(options.origin, options.path, options.query, options.key);
  const bytes = Buffer.from(options.body, 'utf8');
  const client = url.protocol === 'https:' ? https : http;
  return new Promise<CapturedResponse | null>((resolve, reject) => {
    /** The answer as captured so far, once the upstream answered. */
    let captured: CapturedResponse | null = null;
    const upstream = client.request(
      url,
      { method: options.method, headers: upstreamHeaders(options.wire, options.headers, options.key, bytes.length) },
      (answer) => {
        const status = answer.statusCode ?? 502;
        const headers: Record<string, string> = {};
        const returned: Record<string, string | string[]> = {};
        for (const [name, value] of Object.entries(answer.headers)) {
          if (value === undefined) continue;
          if (!NOT_RETURNED.has(name)) returned[name] = value;
          if (RESPONSE_HEADER_ALLOWLIST.has(name)) headers[name] = Array.isArray(value) ? value.join(', ') : value;
        }
        const type = headers['content-type'] ?? '';
        const kind = type.includes('event-stream') ? 'sse' : type.includes('json') ? 'json' : 'text';
        options.response.writeHead(status, returned);
        options.response.flushHeaders();
        const chunks: CassetteChunk[] = [];
        let last = performance.now();
        captured = { status, headers, kind, chunks, complete: false };
        answer.setEncoding('utf8');
        answer.on('data', (data: string) => {
          const now = performance.now();
          chunks.push({ delay_ms: Math.round((now - last) * 10) / 10, data });
          last = now;
          options.response.write(data);
        });
        answer.on('end', () => {
          if (captured) captured.complete = true;
        });
        answer.on('close', () => {
          options.response.end();
          resolve(captured);
        });
        answer.on('error', () => undefined);
      },
    );
    // The engine went away (done reading, killed at its timeout, canceled) before the upstream finished: the upstream
    // call goes too, or an upstream that never answers would hold the harness open after the attempt.
    options.response.on('close', () => {
      if (upstream.destroyed) return;
      // The engine had what it wanted (codex closes once it has read `response.completed`): recorded as a whole
      // answer, so that a replay ends the response where the engine stopped reading, not as a broken upstream.
      if (captured) captured.complete = true;
      resolve(captured);
      upstream.destroy();
    });
    upstream.on('error', (error) =>
      reject(
        new AgentHarnessError(
          'CASSETTE_UPSTREAM_FAILED',
          `Recording could not reach the upstream ${url.origin}: ${error.message}`,
          { cause: error, details: { upstream: url.origin } },
        ),
      ),
    );
    upstream.end(bytes);
  });
}
