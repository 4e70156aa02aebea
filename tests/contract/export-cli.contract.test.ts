/**
 * `agent-harness export`: a recorded run (a fake codex replaying a golden stream) as ATIF and as OTLP/JSON, and the
 * spans sent to an OTLP/HTTP receiver on 127.0.0.1 that the test runs (a plain node http server capturing the POST).
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AtifTrajectorySchema } from '../../src/export/atif-schema.js';
import { BIN, createCliSandbox, installFakeEngine, REPO, runCliProcess, type CliSandbox } from '../helpers/cli.js';

const STREAMS = path.join(REPO, 'fixtures', 'streams', 'codex');
let sandbox: CliSandbox;
let handle: string;

interface OtlpSpan {
  name: string;
  spanId: string;
  parentSpanId?: string;
  attributes: Array<{ key: string; value: Record<string, unknown> }>;
  events?: Array<{ name: string; attributes: Array<{ key: string; value: Record<string, unknown> }> }>;
  status?: { code?: number };
}

function spansOf(request: unknown): OtlpSpan[] {
  const body = request as { resourceSpans: Array<{ scopeSpans: Array<{ spans: OtlpSpan[] }> }> };
  return body.resourceSpans.flatMap((r) => r.scopeSpans.flatMap((s) => s.spans));
}

function attr(span: { attributes: OtlpSpan['attributes'] }, key: string): unknown {
  const value = span.attributes.find((a) => a.key === key)?.value;
  return value ? Object.values(value)[0] : undefined;
}

beforeAll(() => {
  sandbox = createCliSandbox();
  installFakeEngine(sandbox, 'codex', { stdoutFile: path.join(STREAMS, 'turn1.stdout.jsonl') });
  const start = runCliProcess(sandbox, ['start', '--prompt', 'write out.txt', 'codex']);
  expect(start.status, start.stderr).toBe(0);
  handle = /Run handle: (\w+)/.exec(start.stderr)![1]!;
});
afterAll(() => sandbox.cleanup());

/** Runs `export --format otlp <handle> ...extra` (asynchronously: the test's server answers) to the endpoint on `port`. */
async function exportToEndpoint(
  port: number,
  extra: string[] = [],
): Promise<{ status: number | null; stderr: string }> {
  const child = spawn(process.execPath, [BIN, 'export', '--format', 'otlp', handle, ...extra], {
    cwd: sandbox.root,
    env: { ...sandbox.env, OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${port}` },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  const status = await new Promise<number | null>((resolve) => child.on('close', resolve));
  return { status, stderr };
}

describe('agent-harness export', () => {
  it('writes an ATIF v1.7 trajectory of the attempt to stdout, with its tool-call step', () => {
    const run = runCliProcess(sandbox, ['export', '--format', 'atif', handle, '--attempt', '1']);
    expect(run.status, run.stderr).toBe(0);
    const trajectory = AtifTrajectorySchema.parse(JSON.parse(run.stdout));
    expect(trajectory.schema_version).toBe('ATIF-v1.7');
    expect(trajectory.session_id).toBe('01a2053b-9f5a-7bc0-b066-eb965712ebee');
    expect(trajectory.steps[0]).toMatchObject({ step_id: 1, source: 'user', message: 'write out.txt' });
    const toolStep = trajectory.steps.find((s) => s.tool_calls?.length);
    expect(toolStep?.tool_calls?.[0]).toMatchObject({ extra: { kind: 'shell', command: 'echo hello > out.txt' } });
    expect(toolStep?.observation?.results[0]).toMatchObject({ extra: { exit_code: 0 } });
    expect(trajectory.steps.at(-1)).toMatchObject({ source: 'agent', message: 'DONE' });
    expect(trajectory.final_metrics).toMatchObject({ total_steps: trajectory.steps.length, extra: { tool_calls: 1 } });
  });

  it('writes to --out, and takes --attempt', () => {
    const out = path.join(sandbox.root, 'exports', 'trajectory.json');
    const run = runCliProcess(sandbox, ['export', '--format', 'atif', handle, '--attempt', '1', '--out', out]);
    expect(run.status, run.stderr).toBe(0);
    expect(run.stdout).toBe('');
    expect(AtifTrajectorySchema.parse(JSON.parse(fs.readFileSync(out, 'utf8'))).trajectory_id).toMatch(/\.1$/);
    const missing = runCliProcess(sandbox, ['export', '--format', 'atif', handle, '--attempt', '5']);
    expect(missing.status).toBe(1);
    expect(missing.stderr).toContain('error RUN_NOT_FOUND');
  });

  it("starts a resumed attempt's trajectory with the user's reply", () => {
    const resumed = runCliProcess(sandbox, ['resume', handle, 'and now a README']);
    expect(resumed.status, resumed.stderr).toBe(0);
    const run = runCliProcess(sandbox, ['export', '--format', 'atif', handle, '--attempt', '2']);
    expect(run.status, run.stderr).toBe(0);
    const trajectory = AtifTrajectorySchema.parse(JSON.parse(run.stdout));
    expect(trajectory.trajectory_id).toMatch(/\.2$/);
    expect(trajectory.steps[0]).toMatchObject({ step_id: 1, source: 'user', message: 'and now a README' });
    expect(trajectory.steps.filter((s) => s.source === 'user')).toHaveLength(1);
  });

  it('refuses a missing or unknown format with a usage error', () => {
    const none = runCliProcess(sandbox, ['export', handle]);
    expect(none.status).toBe(2);
    expect(none.stderr).toContain('--format atif');
    const bad = runCliProcess(sandbox, ['export', '--format', 'json', handle]);
    expect(bad.status).toBe(2);
    expect(bad.stderr).toContain('"json"');
  });

  it('teaches in --help', () => {
    const help = runCliProcess(sandbox, ['export', '--help']);
    expect(help.status).toBe(0);
    expect(help.stdout).toContain('OTEL_EXPORTER_OTLP_ENDPOINT');
    expect(help.stdout).toContain('tool_calls');
  });

  it('writes OTLP/JSON GenAI spans: invoke_agent, execute_tool under it, and the verdict as an evaluation event', () => {
    const run = runCliProcess(sandbox, ['export', '--format', 'otlp', handle, '--attempt', '1']);
    expect(run.status, run.stderr).toBe(0);
    const spans = spansOf(JSON.parse(run.stdout));
    const agent = spans.find((s) => s.name === 'invoke_agent codex');
    expect(agent).toBeDefined();
    expect(attr(agent!, 'gen_ai.operation.name')).toBe('invoke_agent');
    expect(attr(agent!, 'gen_ai.conversation.id')).toBe('01a2053b-9f5a-7bc0-b066-eb965712ebee');
    const tools = spans.filter((s) => attr(s, 'gen_ai.operation.name') === 'execute_tool');
    expect(tools).toHaveLength(1);
    expect(tools[0]!.parentSpanId).toBe(agent!.spanId);
    expect(attr(tools[0]!, 'agent_harness.tool.exit_code')).toBe(0);
    const verdict = agent!.events?.find((e) => e.name === 'gen_ai.evaluation.result');
    expect(verdict && attr(verdict, 'gen_ai.evaluation.score.label')).toBe('awaiting_input');
  });

  it('sends the spans to OTEL_EXPORTER_OTLP_ENDPOINT over OTLP/HTTP', async () => {
    const received: Array<{ url: string; type: string; body: string }> = [];
    const server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        received.push({
          url: req.url ?? '',
          type: String(req.headers['content-type']),
          body: Buffer.concat(chunks).toString('utf8'),
        });
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end('{}');
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    try {
      const { status, stderr } = await exportToEndpoint(port, ['--attempt', '1', '--out', 'spans.json']);
      expect(status, stderr).toBe(0);
      expect(stderr).toContain(`sent 2 spans to http://127.0.0.1:${port}`);
      expect(received).toHaveLength(1);
      expect(received[0]!.url).toBe('/v1/traces');
      expect(received[0]!.type).toContain('application/json');
      const names = spansOf(JSON.parse(received[0]!.body)).map((s) => s.name);
      expect(names.sort()).toEqual(['execute_tool command_execution', 'invoke_agent codex']);
      expect(spansOf(JSON.parse(fs.readFileSync(path.join(sandbox.root, 'spans.json'), 'utf8')))).toHaveLength(2);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('fails with EXPORT_FAILED when the OTLP endpoint refuses the spans', async () => {
    const server = http.createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        res.writeHead(400);
        res.end('bad');
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    try {
      const { status, stderr } = await exportToEndpoint(port);
      expect(status).toBe(1);
      expect(stderr).toContain('error EXPORT_FAILED');
      expect(stderr).toContain(`http://127.0.0.1:${port}`);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
