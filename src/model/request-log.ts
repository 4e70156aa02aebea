/**
 * The model server's request log: every request it answers, recorded in memory (the live `requests` array, and an
 * attempt lane's own) and appended to the log file as it is answered, credential headers redacted; and the refused
 * outbound attempts.
 */
import type { IncomingMessage } from 'node:http';
import { appendOwnFileSync } from '../runtime/own-file.js';
import type { GateRelease } from './route-gate.js';
import type { WireApiId } from './wire-api.js';

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

/** What the server records of a request: a row without its `seq` and `ts`, whose null fields may be left out. */
export type RecordEntry = Omit<RecordedRequest, 'seq' | 'ts' | 'wire' | 'body' | 'turn_index' | 'lane'> &
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

/** The headers as recorded: one string each, secrets `[redacted]`. */
export function redactHeaders(headers: IncomingMessage['headers']): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined) continue;
    out[name] = SECRET_HEADERS.has(name) ? '[redacted]' : Array.isArray(value) ? value.join(', ') : value;
  }
  return out;
}

/** Where and how the log is written (the server's options of the same names). */
export interface RequestLogOptions {
  logFile?: string | (() => string | null) | undefined;
  redactLog?: ((line: string) => string) | undefined;
  onLogError?: ((error: Error) => void) | undefined;
}

/** The log's state: the rows so far, the refused egress, and why the file stopped being written. */
export interface RequestLog {
  readonly options: RequestLogOptions;
  readonly requests: RecordedRequest[];
  readonly egress: EgressAttempt[];
  /** The request list of an open attempt lane, by key. */
  readonly laneRequests: (key: string) => RecordedRequest[] | undefined;
  seq: number;
  logError: Error | null;
}

/** A new, empty request log. */
export function createRequestLog(
  options: RequestLogOptions,
  laneRequests: (key: string) => RecordedRequest[] | undefined,
): RequestLog {
  return { options, requests: [], egress: [], laneRequests, seq: 0, logError: null };
}

/** Records a request; `wire`, `body` and `turn_index` are null unless given (the row's keys keep their order). */
export function recordRequest(log: RequestLog, entry: RecordEntry, lane?: string): void {
  log.seq += 1;
  const row: RecordedRequest = Object.assign(
    { seq: log.seq, ts: new Date().toISOString(), method: entry.method, path: entry.path, wire: null },
    { headers: entry.headers, body: null, turn_index: null },
    entry,
    lane === undefined ? {} : { lane },
  );
  log.requests.push(row);
  if (lane !== undefined) log.laneRequests(lane)?.push(row);
  // Synchronous on purpose: the line is on disk before the answer goes out, even if the engine is killed next.
  const { logFile, redactLog, onLogError } = log.options;
  const file = typeof logFile === 'function' ? logFile() : logFile;
  if (!file || log.logError) return;
  try {
    // Not followed if a symlink, never blocked by a FIFO: an attempt's log lies in the engine's working directory.
    const line = JSON.stringify(row);
    appendOwnFileSync(file, `${redactLog ? redactLog(line) : line}\n`);
  } catch (error) {
    log.logError = error instanceof Error ? error : new Error(String(error));
    onLogError?.(log.logError);
  }
}

/** Records a refused outbound attempt. */
export function recordEgress(log: RequestLog, method: string, target: string): void {
  log.egress.push({ ts: new Date().toISOString(), method, target });
}
