/**
 * `agent-harness view`: the HTML report's page and a versioned JSON API over a run root, served on 127.0.0.1 only.
 * Every request must carry the server's random token (`?token=` or the `x-agent-harness-token` header) and name
 * 127.0.0.1 or localhost as its Host, so another page in the browser (or a DNS-rebinding site) gets 403. Responses
 * are validated against the API's zod schemas before they are sent. A running attempt is tailed over server-sent
 * events from its `rasp.N.jsonl` (written as the engine prints), through the same timeline builder as the report.
 */
import { randomBytes, timingSafeEqual } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import type * as z from 'zod';
import { AgentHarnessError } from '../errors/index.js';
import type { RunIndexEntry } from '../protocol/index.js';
import { readLinesSync } from '../runtime/bounded-input.js';
import { AUDIT_DIR, listRuns, resolveRunSelector } from '../runtime/run-store.js';
import { type AttemptViewCache, readAttemptView, readRunView } from './attempt-view.js';
import { tailAttempt } from './view-tail.js';
import { buildConsistencyReport } from './build.js';
import type { StatisticsSection } from './statistics.js';
import { pageCsp, renderHtmlReport } from './render-html.js';
import { runCase, runReportInputs } from './run-inputs.js';
import {
  ApiAttemptResponseSchema,
  ApiEventsResponseSchema,
  ApiRunResponseSchema,
  ApiRunsResponseSchema,
  VIEW_DATA_VERSION,
} from './view-schema.js';

/** The API's path prefix. */
export const VIEW_API = '/api/v1';
/**
 * Why `…/events` of attempt `n` has no events to give: its `fcmp.N.jsonl` is not there. A running attempt has not
 * written it yet; a finished one lost it (removed by hand or by the agent, which can write to `.audit/`).
 */
function missingFcmpNote(run: RunIndexEntry, n: number): string {
  const file = `${AUDIT_DIR}/fcmp.${n}.jsonl`;
  let status: unknown = null;
  try {
    status = (
      JSON.parse(fs.readFileSync(path.join(run.run_dir, AUDIT_DIR, `meta.${n}.json`), 'utf8')) as {
        status?: unknown;
      }
    ).status;
  } catch {
    // No readable meta: said as a missing file below.
  }
  return status === 'running'
    ? `Attempt ${n} of run ${run.handle} is still running: its FCMP events (${file}) are written when it ends; follow it with …/tail.`
    : `Attempt ${n} of run ${run.handle} has no FCMP file (${file} is missing from ${run.run_dir}): its events cannot be listed. Rebuild them from its raw logs with \`agent-harness translate ${run.handle} --attempt ${n} --translate 2\`.`;
}

/** Most FCMP events `…/events` returns. */
const MAX_EVENTS = 100_000;

/** A running view server. */
export interface ViewServer {
  /** `http://127.0.0.1:<port>/?token=…`: what to open. */
  url: string;
  port: number;
  token: string;
  /** Stops listening and ends the open tails. */
  close(): Promise<void>;
}

/** Options of {@link startViewServer}. */
export interface ViewServerOptions {
  runRoot: string;
  /** 0 (default): any free port. */
  port?: number;
  /** The token (default: 24 random bytes, base64url). */
  token?: string;
  /**
   * Trial statistics to show (the `statistics` section of a test run's consistency.json, `view --report`): the page's
   * Trials section and `GET /api/v1/statistics`. The run directories do not carry trial records, so only a report can.
   */
  statistics?: StatisticsSection;
}

class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

function sameToken(given: string | null, token: string): boolean {
  if (given === null) return false;
  const a = Buffer.from(given);
  const b = Buffer.from(token);
  return a.length === b.length && timingSafeEqual(a, b);
}

function sendJson<T>(response: http.ServerResponse, status: number, schema: z.ZodType<T> | null, body: T): void {
  const checked = schema ? schema.parse(body) : body;
  response.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'cache-control': 'no-store',
    'x-content-type-options': 'nosniff',
  });
  response.end(JSON.stringify(checked));
}

async function findRun(runRoot: string, handle: string): Promise<RunIndexEntry> {
  // A handle (or a unique prefix of 4+ hex digits) only: never a path the client chose.
  if (!/^[0-9a-f]{4,8}$/.test(handle)) throw new HttpError(400, 'USAGE_ERROR', `Not a run handle: ${handle}`);
  try {
    return await resolveRunSelector(runRoot, handle);
  } catch (error) {
    if (error instanceof AgentHarnessError)
      throw new HttpError(error.code === 'RUN_NOT_FOUND' ? 404 : 409, error.code, error.message);
    throw error;
  }
}

function attemptOf(run: RunIndexEntry, value: string): number {
  const n = Number(value);
  if (!/^\d+$/.test(value) || !fs.existsSync(path.join(run.run_dir, AUDIT_DIR, `meta.${n}.json`)))
    throw new HttpError(404, 'RUN_NOT_FOUND', `Run ${run.handle} has no attempt ${value}.`);
  return n;
}

async function runViews(runRoot: string, cache: AttemptViewCache) {
  const runs = await listRuns(runRoot);
  return runs.map((run) => readRunView(run, { timeline: false, caseName: runCase(run), testId: run.run_id, cache }));
}

/** What the view server's routes read and change: its state, explicit. */
interface ViewState {
  readonly options: ViewServerOptions;
  readonly token: string;
  /** The stops of the open tails, ended when the server closes. */
  readonly tails: Set<() => void>;
  readonly cache: AttemptViewCache;
  /** The port listened on (0 until it listens): the only Host accepted is 127.0.0.1 or localhost on it. */
  port: number;
}

/** Starts the server on 127.0.0.1. */
export async function startViewServer(options: ViewServerOptions): Promise<ViewServer> {
  const state: ViewState = {
    options,
    token: options.token ?? randomBytes(24).toString('base64url'),
    tails: new Set(),
    cache: new Map(),
    port: 0,
  };
  const server = http.createServer((request, response) => {
    routeView(state, request, response).catch((error: unknown) => answerError(response, error));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', (error: NodeJS.ErrnoException) =>
      reject(
        new AgentHarnessError(
          'VIEW_SERVER_FAILED',
          `Cannot listen on 127.0.0.1:${options.port ?? 0}: ${error.message}`,
          { cause: error, details: { port: options.port ?? 0 } },
        ),
      ),
    );
    server.listen(options.port ?? 0, '127.0.0.1', () => resolve());
  });
  state.port = (server.address() as { port: number }).port;
  const { port, token } = state;
  return {
    url: `http://127.0.0.1:${port}/?token=${token}`,
    port,
    token,
    close: () =>
      new Promise<void>((resolve) => {
        for (const stop of state.tails) stop();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Answers a request that failed: its {@link HttpError}'s status and code, else 500 (nothing more once headers went). */
function answerError(response: http.ServerResponse, error: unknown): void {
  const status = error instanceof HttpError ? error.status : 500;
  const code = error instanceof HttpError ? error.code : 'INTERNAL_ERROR';
  if (response.headersSent) {
    response.end();
    return;
  }
  sendJson(response, status, null, { error: { code, message: (error as Error).message } });
}

/** What one request gets (reads `token` and `port`; a tail changes `tails`); a refusal is thrown as an {@link HttpError}. */
async function routeView(
  state: ViewState,
  request: http.IncomingMessage,
  response: http.ServerResponse,
): Promise<void> {
  const url = new URL(request.url ?? '/', 'http://127.0.0.1');
  const host = String(request.headers.host ?? '');
  const given =
    url.searchParams.get('token') ?? (request.headers['x-agent-harness-token'] as string | undefined) ?? null;
  if (!sameToken(given, state.token) || (host !== `127.0.0.1:${state.port}` && host !== `localhost:${state.port}`))
    throw new HttpError(403, 'FORBIDDEN', 'This server answers only its own page: open the URL it printed.');
  if (request.method !== 'GET' && request.method !== 'HEAD')
    throw new HttpError(405, 'USAGE_ERROR', `${request.method} is not served; the API is read-only.`);
  const parts = url.pathname.split('/').filter(Boolean);
  if (url.pathname === '/' || url.pathname === '/index.html') return servePage(state, response);
  if (`/${parts.slice(0, 2).join('/')}` === VIEW_API && parts[2] === 'statistics' && parts.length === 3) {
    response.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store' });
    response.end(JSON.stringify({ version: VIEW_DATA_VERSION, statistics: state.options.statistics ?? null }));
    return;
  }
  if (`/${parts.slice(0, 2).join('/')}` !== VIEW_API || parts[2] !== 'runs')
    throw new HttpError(404, 'NOT_FOUND', `No such page: ${url.pathname}`);
  return routeRuns(state, request, response, url.pathname, parts.slice(3));
}

/** The HTML report of the run root, live (reads `options`, `token`, `cache`). */
async function servePage(state: ViewState, response: http.ServerResponse): Promise<void> {
  const { options, token, cache } = state;
  const runs = await listRuns(options.runRoot);
  const report = buildConsistencyReport(runReportInputs(runs).inputs, 'agent-harness view');
  if (options.statistics) report.statistics = options.statistics;
  const html = renderHtmlReport({
    version: VIEW_DATA_VERSION,
    generatedAt: new Date().toISOString(),
    title: `agent-harness view — ${options.runRoot}`,
    report,
    runs: runs.map((run) => readRunView(run, { timeline: false, caseName: runCase(run), testId: run.run_id, cache })),
    baseline: null,
    live: { api: VIEW_API, token },
  });
  response.writeHead(200, {
    'content-type': 'text/html; charset=utf-8',
    'content-security-policy': pageCsp({ connect: true }),
    'cache-control': 'no-store',
    'referrer-policy': 'no-referrer',
    'x-content-type-options': 'nosniff',
    'x-frame-options': 'DENY',
  });
  response.end(html);
}

/** `…/runs[/<handle>[/attempts/<n>[/events|/tail]]]`, `rest` the parts after `runs` (a tail changes `tails`). */
async function routeRuns(
  state: ViewState,
  request: http.IncomingMessage,
  response: http.ServerResponse,
  pathname: string,
  rest: string[],
): Promise<void> {
  const { options, cache } = state;
  if (rest.length === 0) {
    sendJson(response, 200, ApiRunsResponseSchema, {
      version: VIEW_DATA_VERSION,
      runs: await runViews(options.runRoot, cache),
    });
    return;
  }
  const run = await findRun(options.runRoot, rest[0]!);
  if (rest.length === 1) {
    const view = readRunView(run, { timeline: false, caseName: runCase(run), testId: run.run_id, cache });
    sendJson(response, 200, ApiRunResponseSchema, { version: VIEW_DATA_VERSION, run: view });
    return;
  }
  if (rest[1] !== 'attempts' || rest.length < 3 || rest.length > 4)
    throw new HttpError(404, 'NOT_FOUND', `No such page: ${pathname}`);
  const n = attemptOf(run, rest[2]!);
  if (rest.length === 3) {
    sendJson(response, 200, ApiAttemptResponseSchema, {
      version: VIEW_DATA_VERSION,
      handle: run.handle,
      attempt: readAttemptView(run.run_dir, n),
    });
    return;
  }
  if (rest[3] === 'events') return serveEvents(response, run, n);
  if (rest[3] === 'tail') {
    const stop = tailAttempt(run, n, request, response);
    state.tails.add(stop);
    response.on('close', () => state.tails.delete(stop));
    return;
  }
  throw new HttpError(404, 'NOT_FOUND', `No such page: ${pathname}`);
}

/** `…/events`: the FCMP events of attempt `n` (at most {@link MAX_EVENTS}, damaged lines left out), or why none. */
function serveEvents(response: http.ServerResponse, run: RunIndexEntry, n: number): void {
  const file = path.join(run.run_dir, AUDIT_DIR, `fcmp.${n}.jsonl`);
  const events: unknown[] = [];
  const note = fs.existsSync(file) ? null : missingFcmpNote(run, n);
  if (!note)
    for (const line of readLinesSync(file, { what: 'FCMP events' })) {
      if (events.length >= MAX_EVENTS) break;
      try {
        if (line.trim() !== '') events.push(JSON.parse(line));
      } catch {
        // A damaged line: left out.
      }
    }
  sendJson(response, 200, ApiEventsResponseSchema, {
    version: VIEW_DATA_VERSION,
    handle: run.handle,
    attempt: n,
    events,
    note,
  });
}
