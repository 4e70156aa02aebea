/**
 * `agent-harness translate`: recorded output (files or a run) through the parsers, and the `--summary` shape.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConformanceReportSchema, FcmpEventSchema } from '../../src/protocol/index.js';
import { createCliSandbox, installFakeEngine, REPO, runCliProcess, type CliSandbox } from '../helpers/cli.js';

const STREAMS = path.join(REPO, 'fixtures', 'streams', 'codex');
const SUMMARY_KEYS = ['completed', 'diagnostics', 'engine', 'error', 'final_message', 'session_id', 'tool_calls'];
let sandbox: CliSandbox;
beforeAll(() => {
  sandbox = createCliSandbox();
  installFakeEngine(sandbox, 'codex', { stdoutFile: path.join(STREAMS, 'turn1.stdout.jsonl') });
});
afterAll(() => sandbox.cleanup());

function summary(args: string[]): Record<string, unknown> {
  const run = runCliProcess(sandbox, ['translate', ...args, '--summary']);
  expect(run.status, run.stderr).toBe(0);
  const value = JSON.parse(run.stdout) as Record<string, unknown>;
  expect(Object.keys(value).sort()).toEqual(SUMMARY_KEYS);
  return value;
}

describe('agent-harness translate', () => {
  it('summarizes a recorded codex stream', () => {
    expect(summary(['--engine', 'codex', '--stdout', path.join(STREAMS, 'turn1.stdout.jsonl')])).toEqual({
      engine: 'codex',
      session_id: '01a2053b-9f5a-7bc0-b066-eb965712ebee',
      final_message: 'DONE',
      tool_calls: 1,
      completed: true,
      error: null,
      diagnostics: [],
    });
  });

  it('reports a truncated run as not completed with an error and a diagnostic, and a failed turn with its message', () => {
    const truncated = summary(['--engine', 'codex', '--stdout', path.join(STREAMS, 'truncated.stdout.jsonl')]);
    expect(truncated.completed).toBe(false);
    expect(truncated.error).toEqual(expect.any(String));
    expect((truncated.diagnostics as Array<{ code: string }>).map((d) => d.code)).toContain('CODEX_TURN_NOT_ENDED');
    const failed = summary(['--engine', 'codex', '--stdout', path.join(STREAMS, 'turn-failed-429.stdout.jsonl')]);
    expect(failed).toMatchObject({ completed: false, error: expect.stringContaining('429') });
  });

  it('reads a PTY capture with CRLF, a BOM and terminal noise only when the split streams have nothing', () => {
    const stream = fs.readFileSync(path.join(STREAMS, 'turn1.stdout.jsonl'), 'utf8');
    const pty = path.join(sandbox.root, 'capture.pty.log');
    fs.writeFileSync(
      pty,
      `\ufeffScript started on 2026-11-23 [COMMAND="codex"]\n\u001b[0m^@${stream.replace(/\n/g, '\r\n')}Script done on 2026-11-23\n`,
    );
    const empty = path.join(sandbox.root, 'empty.log');
    fs.writeFileSync(empty, 'Reading additional input from stdin...\n');
    const fallback = summary(['--engine', 'codex', '--stdout', empty, '--pty', pty]);
    expect(fallback).toMatchObject({
      session_id: '01a2053b-9f5a-7bc0-b066-eb965712ebee',
      final_message: 'DONE',
      completed: true,
      tool_calls: 1,
    });
    expect((fallback.diagnostics as Array<{ code: string }>).map((d) => d.code)).toContain('PTY_FALLBACK_USED');
    // When stdout carries the payload, the PTY copy is not consumed again.
    const both = summary(['--engine', 'codex', '--stdout', path.join(STREAMS, 'turn1.stdout.jsonl'), '--pty', pty]);
    expect(both.tool_calls).toBe(1);
    expect((both.diagnostics as Array<{ code: string }>).map((d) => d.code)).not.toContain('PTY_FALLBACK_USED');
  });

  it('prints FCMP (view 2) and markdown (view 3)', () => {
    const fcmp = runCliProcess(sandbox, [
      'translate',
      '--engine',
      'codex',
      '--stdout',
      path.join(STREAMS, 'turn1.stdout.jsonl'),
      '--translate',
      '2',
    ]);
    const events = fcmp.stdout
      .trim()
      .split('\n')
      .map((line) => FcmpEventSchema.parse(JSON.parse(line)));
    expect(events.at(-1)?.type).toBe('user.input.required');
    const md = runCliProcess(sandbox, [
      'translate',
      '--engine',
      'codex',
      '--stdout',
      path.join(STREAMS, 'turn1.stdout.jsonl'),
    ]);
    expect(md.stdout).toContain('- Assistant: DONE');
  });

  it('translates a run by handle and attempt, matching what the live attempt wrote', () => {
    const start = runCliProcess(sandbox, ['start', '--prompt', 'x', 'codex']);
    const handle = /Run handle: (\w+)/.exec(start.stderr)![1]!;
    const runDir = /Run directory: (\S+)/.exec(start.stderr)![1]!;
    const replayed = runCliProcess(sandbox, ['translate', handle, '--attempt', '1', '--translate', '2']);
    expect(replayed.status).toBe(0);
    const live = fs
      .readFileSync(path.join(runDir, '.audit', 'fcmp.1.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    const again = replayed.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(again.map((e) => [e.type, e.data])).toEqual(live.map((e) => [e.type, e.data]));
    const conformance = ConformanceReportSchema.parse(
      JSON.parse(fs.readFileSync(path.join(runDir, '.audit', 'conformance-report.1.json'), 'utf8')),
    );
    expect(conformance).toMatchObject({
      engine: 'codex',
      attempt: 1,
      launch: 'start',
      tool_call_count: 1,
      assistant_message_count: 1,
      completion: { state: 'awaiting_input' },
    });
    expect(conformance.parser_profile.streams).toEqual(['stdout']);
    expect(summary([handle]).session_id).toBe('01a2053b-9f5a-7bc0-b066-eb965712ebee');
  });

  it('fails clearly on bad input', () => {
    const missing = runCliProcess(sandbox, [
      'translate',
      '--engine',
      'codex',
      '--stdout',
      path.join(sandbox.root, 'nope.log'),
    ]);
    expect(missing.status).toBe(1);
    expect(missing.stderr).toContain('agent-harness: error TRANSLATE_INPUT_INVALID: ');
    const nothing = runCliProcess(sandbox, ['translate', '--engine', 'codex']);
    expect(nothing.status).toBe(2);
    expect(nothing.stderr).toContain('USAGE_ERROR');
    const unknown = runCliProcess(sandbox, ['translate', 'deadbeef']);
    expect(unknown.status).toBe(1);
    expect(unknown.stderr).toContain('RUN_NOT_FOUND');
    const garbage = path.join(sandbox.root, 'garbage.bin');
    fs.writeFileSync(garbage, Buffer.from([0xff, 0xfe, 0x00, 0x7b, 0x0a, 0xc3, 0x28, 0x0a]));
    const parsed = summary(['--engine', 'codex', '--stdout', garbage]);
    expect(parsed.completed).toBe(false);
  });

  it("never reads a run's audit log through a symlink (translate and export refuse it by name)", () => {
    const start = runCliProcess(sandbox, ['start', '--prompt', 'x', 'codex']);
    const handle = /Run handle: (\w+)/.exec(start.stderr)![1]!;
    const audit = path.join(/Run directory: (\S+)/.exec(start.stderr)![1]!, '.audit');
    // The agent can replace its own logs: a link to a host file must not be printed or exported.
    const secret = path.join(sandbox.root, 'host-secret.txt');
    fs.writeFileSync(secret, 'host-secret-line\n');
    for (const name of ['stdout.1.log', 'fcmp.1.jsonl']) {
      fs.rmSync(path.join(audit, name));
      fs.symlinkSync(secret, path.join(audit, name));
    }
    for (const args of [
      ['translate', handle, '--translate', '2'],
      ['translate', handle, '--summary'],
      ['export', '--format', 'atif', handle],
    ]) {
      const run = runCliProcess(sandbox, args);
      expect(run.status, args.join(' ')).toBe(1);
      expect(run.stderr, args.join(' ')).toContain('INPUT_NOT_REGULAR_FILE');
      expect(run.stderr, args.join(' ')).toContain('is a symbolic link');
      expect(run.stdout + run.stderr, args.join(' ')).not.toContain('host-secret-line');
    }
  });
});

describe('a reader that stops early (`… | head`)', () => {
  /** Runs the CLI with its stdout on a pipe that is closed after the first chunk; resolves its status and stderr. */
  async function readFirstChunkThenClose(args: string[]): Promise<{ status: number | null; stderr: string }> {
    const { spawn } = await import('node:child_process');
    const child = spawn(process.execPath, [path.join(REPO, 'bin', 'agent-harness.js'), ...args], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.stdout.once('data', () => child.stdout.destroy());
    const status = await new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)));
    return { status, stderr };
  }

  it('translate stops, exits 0 and prints no error when its stdout closes', async () => {
    const stream = path.join(REPO, 'fixtures', 'streams', 'codex', 'done-marker.stdout.jsonl');
    const big = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'ah-epipe-')), 'big.jsonl');
    try {
      fs.writeFileSync(big, fs.readFileSync(stream, 'utf8').repeat(3000));
      const result = await readFirstChunkThenClose([
        'translate',
        '--engine',
        'codex',
        '--stdout',
        big,
        '--translate',
        '2',
      ]);
      expect(result.stderr).toBe('');
      expect(result.status).toBe(0);
    } finally {
      fs.rmSync(path.dirname(big), { recursive: true, force: true });
    }
  });

  it('--help exits 0 with no stack trace when its stdout closes', async () => {
    const result = await readFirstChunkThenClose(['--help']);
    expect(result.stderr).toBe('');
    expect(result.status).toBe(0);
  });
});
