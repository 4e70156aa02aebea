/**
 * `agent-harness view`: the command prints its URL, serves on 127.0.0.1 only, answers 403 without its token or to
 * another Host, and its versioned API (`/api/v1/…`) answers what the zod schemas say; a running attempt is tailed
 * over server-sent events until it ends; SIGTERM stops it. Runs come from fake engines replaying recorded streams
 * (no engine process).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FcmpEventSchema } from '../../src/protocol/index.js';
import {
  ApiAttemptResponseSchema,
  ApiErrorSchema,
  ApiEventsResponseSchema,
  ApiRunResponseSchema,
  ApiRunsResponseSchema,
  TimelineItemSchema,
} from '../../src/report/view-schema.js';
import { BIN, createCliSandbox, installFakeEngine, REPO, runCliProcess, type CliSandbox } from '../helpers/cli.js';
import { installGatedEngine } from '../helpers/hostile-engine.js';
import { scaled } from '../helpers/load-scaled.js';

const STREAMS = path.join(REPO, 'fixtures', 'streams');
let sandbox: CliSandbox;
let view: ChildProcess;
let base: URL;
const handles: Record<string, string> = {};

function handleOf(stderr: string): string {
  return /^Run handle: ([0-9a-f]{8})$/m.exec(stderr)![1]!;
}

/** GETs `pathname` from the server (with its token unless `token` is null); `host` overrides the Host header. */
function get(
  pathname: string,
  options: { token?: string | null; host?: string; method?: string } = {},
): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: string }> {
  const url = new URL(pathname, base);
  const token = options.token === undefined ? base.searchParams.get('token') : options.token;
  if (token !== null) url.searchParams.set('token', token);
  return new Promise((resolve, reject) => {
    const request = http.request(
      url,
      { method: options.method ?? 'GET', headers: options.host ? { host: options.host } : {} },
      (response) => {
        let body = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => {
          body += chunk;
        });
        response.on('end', () => resolve({ status: response.statusCode ?? 0, headers: response.headers, body }));
      },
    );
    request.on('error', reject);
    request.end();
  });
}

beforeAll(async () => {
  sandbox = createCliSandbox();
  installFakeEngine(sandbox, 'codex', { stdoutFile: path.join(STREAMS, 'codex', 'turn1.stdout.jsonl') });
  installFakeEngine(sandbox, 'claude', { stdoutFile: path.join(STREAMS, 'claude', 'turn1.stdout.jsonl') });
  for (const engine of ['codex', 'claude'])
    handles[engine] = handleOf(runCliProcess(sandbox, ['start', '--prompt', 'Write out.txt.', engine]).stderr);
  view = spawn(process.execPath, [BIN, 'view', '--port', '0'], {
    cwd: sandbox.root,
    env: sandbox.env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  base = new URL(
    await new Promise<string>((resolve, reject) => {
      let out = '';
      view.stdout!.on('data', (chunk: Buffer) => {
        out += chunk.toString();
        const line = /^(http:\/\/127\.0\.0\.1:\d+\/\?token=\S+)$/m.exec(out);
        if (line) resolve(line[1]!);
      });
      view.on('exit', (code) => reject(new Error(`view exited ${code} before printing its URL`)));
    }),
  );
}, scaled(120_000));
afterAll(() => {
  if (view && view.exitCode === null) view.kill('SIGKILL');
  sandbox?.cleanup();
});

describe('agent-harness view', () => {
  it('answers only requests with its token and a loopback Host; the page has a CSP that allows its API only', async () => {
    expect(base.hostname).toBe('127.0.0.1');
    expect(base.searchParams.get('token')).toMatch(/^[A-Za-z0-9_-]{32}$/);
    const none = await get('/api/v1/runs', { token: null });
    expect(none.status).toBe(403);
    expect(ApiErrorSchema.parse(JSON.parse(none.body)).error.code).toBe('FORBIDDEN');
    expect((await get('/api/v1/runs', { token: 'x'.repeat(32) })).status).toBe(403);
    expect((await get('/', { token: null })).status).toBe(403);
    // A page of another origin that resolved its own name to 127.0.0.1 (DNS rebinding) sends its own Host.
    expect((await get('/api/v1/runs', { host: `evil.example:${base.port}` })).status).toBe(403);
    expect((await get('/api/v1/runs', { method: 'POST' })).status).toBe(405);
    const page = await get('/');
    expect(page.status).toBe(200);
    expect(page.headers['content-security-policy']).toMatch(
      /default-src 'none'; script-src 'sha256-[^']+'; .*connect-src 'self'/,
    );
    expect(page.body).toContain(handles.codex);
  });

  it('GET /api/v1/runs, a run, an attempt (its timeline) and its FCMP events match the API schemas', async () => {
    const runs = ApiRunsResponseSchema.parse(JSON.parse((await get('/api/v1/runs')).body));
    expect(runs.runs.map((run) => run.handle).sort()).toEqual([handles.claude, handles.codex].sort());
    expect(runs.runs.every((run) => run.attempts.every((a) => a.timeline === null))).toBe(true);
    const run = ApiRunResponseSchema.parse(JSON.parse((await get(`/api/v1/runs/${handles.codex}`)).body)).run;
    expect(run).toMatchObject({ engine: 'codex', case: 'Write out.txt.', running: false });
    expect(run.attempts[0]!.toolKeys).toEqual(['shell: echo hello > out.txt']);
    const attempt = ApiAttemptResponseSchema.parse(
      JSON.parse((await get(`/api/v1/runs/${handles.codex}/attempts/1`)).body),
    ).attempt;
    const tool = attempt.timeline!.find((item) => item.kind === 'tool')!.tool!;
    expect(tool).toMatchObject({ command: 'echo hello > out.txt', exitCode: 0, status: 'completed' });
    expect(Object.keys(attempt.steps)).toContain('engine');
    const events = ApiEventsResponseSchema.parse(
      JSON.parse((await get(`/api/v1/runs/${handles.codex}/attempts/1/events`)).body),
    ).events.map((event) => FcmpEventSchema.parse(event));
    expect(events.map((event) => event.type)).toContain('tool.call');
    // A handle prefix works; what is not a handle or not a run is an error the schema describes.
    expect((await get(`/api/v1/runs/${handles.codex.slice(0, 5)}`)).status).toBe(200);
    const missing = await get('/api/v1/runs/ffff0000');
    expect(missing.status).toBe(404);
    expect(ApiErrorSchema.parse(JSON.parse(missing.body)).error.code).toBe('RUN_NOT_FOUND');
    expect((await get('/api/v1/runs/..%2F..%2Fetc')).status).toBe(400);
    expect((await get(`/api/v1/runs/${handles.codex}/attempts/9`)).status).toBe(404);
  });

  it('tails a running attempt over server-sent events until it ends', async () => {
    const gate = installGatedEngine(sandbox);
    const start = spawn(process.execPath, [BIN, 'start', '--prompt', 'Live.', 'codex'], {
      cwd: sandbox.root,
      env: sandbox.env,
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    const exited = new Promise<number | null>((resolve) => start.on('exit', resolve));
    let handle = '';
    await expect
      .poll(
        async () => {
          const runs = ApiRunsResponseSchema.parse(JSON.parse((await get('/api/v1/runs')).body)).runs;
          handle = runs.find((run) => run.running)?.handle ?? '';
          return handle;
        },
        { timeout: scaled(60_000), interval: 200 },
      )
      .not.toBe('');
    const url = new URL(`/api/v1/runs/${handle}/attempts/1/tail`, base);
    url.searchParams.set('token', base.searchParams.get('token')!);
    const events: Array<{ event: string; data: unknown }> = [];
    const ended = new Promise<void>((resolve, reject) => {
      http
        .get(url, (response) => {
          expect(response.headers['content-type']).toContain('text/event-stream');
          let buffer = '';
          response.setEncoding('utf8');
          response.on('data', (chunk: string) => {
            buffer += chunk;
            for (let end = buffer.indexOf('\n\n'); end >= 0; end = buffer.indexOf('\n\n')) {
              const block = buffer.slice(0, end);
              buffer = buffer.slice(end + 2);
              const event = /^event: (.+)$/m.exec(block)?.[1];
              const data = /^data: (.+)$/m.exec(block)?.[1];
              if (event && data) events.push({ event, data: JSON.parse(data) });
            }
          });
          response.on('end', () => resolve());
        })
        .on('error', reject);
    });
    // While the engine waits at its gate, the tool call it printed is already on the tail.
    await expect
      .poll(() => events.some((e) => e.event === 'item' && JSON.stringify(e.data).includes('echo live > live.txt')), {
        timeout: scaled(60_000),
        interval: 100,
      })
      .toBe(true);
    expect(events.some((e) => e.event === 'end')).toBe(false);
    fs.writeFileSync(gate, '');
    await ended;
    expect(await exited).toBe(0);
    const items = events.filter((e) => e.event === 'item').map((e) => TimelineItemSchema.parse(e.data));
    expect(items.some((item) => item.kind === 'message' && item.text === 'LIVE-DONE')).toBe(true);
    expect(items.at(-1)?.kind).toBe('exited');
    expect(events.at(-1)?.event).toBe('end');
  });

  it('says why an attempt has no events when its FCMP file is missing, instead of an empty list alone', async () => {
    const handle = handleOf(runCliProcess(sandbox, ['start', '--prompt', 'Lose my events.', 'codex']).stderr);
    const read = ApiEventsResponseSchema.parse(
      JSON.parse((await get(`/api/v1/runs/${handle}/attempts/1/events`)).body),
    );
    expect(read.events.length).toBeGreaterThan(0);
    expect(read.note).toBeNull();
    const runs = JSON.parse(runCliProcess(sandbox, ['runs', '--json']).stdout) as Array<{
      handle: string;
      run_dir: string;
    }>;
    const runDir = runs.find((r) => r.handle === handle)!.run_dir;
    fs.rmSync(path.join(runDir, '.audit', 'fcmp.1.jsonl'));
    const lost = ApiEventsResponseSchema.parse(
      JSON.parse((await get(`/api/v1/runs/${handle}/attempts/1/events`)).body),
    );
    expect(lost.events).toEqual([]);
    expect(lost.note).toContain('.audit/fcmp.1.jsonl is missing');
    expect(lost.note).toContain(`agent-harness translate ${handle} --attempt 1`);
  });

  it('says VIEW_SERVER_FAILED for a port in use, and USAGE_ERROR for a bad one', () => {
    const taken = runCliProcess(sandbox, ['view', '--port', base.port]);
    expect(taken.status).toBe(1);
    expect(taken.stderr).toContain('VIEW_SERVER_FAILED');
    expect(taken.stderr).toContain(`127.0.0.1:${base.port}`);
    const bad = runCliProcess(sandbox, ['view', '--port', 'http']);
    expect(bad.status).toBe(2);
    expect(bad.stderr).toContain('--port takes a port number');
  });

  it('refuses a --root that is missing or a file with USAGE_ERROR naming it, instead of serving nothing', () => {
    const file = path.join(sandbox.root, 'not-a-root.txt');
    fs.writeFileSync(file, 'x');
    for (const root of [path.join(sandbox.root, 'no-such-root'), file]) {
      const run = runCliProcess(sandbox, ['view', '--port', '0', '--root', root]);
      expect(run.status, run.stderr).toBe(2);
      expect(run.stderr).toContain(`--root ${JSON.stringify(root)}`);
      expect(run.stderr).toContain('is not a directory');
    }
  });

  it('stops on SIGTERM', async () => {
    const code = new Promise<number | null>((resolve) => view.on('exit', resolve));
    view.kill('SIGTERM');
    expect(await code).toBe(0);
  });
});
