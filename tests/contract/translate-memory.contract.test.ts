/**
 * `agent-harness translate` streams: a generated 40 MiB codex recording (15k turns) goes through the real command,
 * and the child's peak RSS (its own getrusage maxrss, reported at exit by a preloaded module) stays under a bound
 * a translation holding its events cannot meet — the array implementation peaked near 250 MB on this input, the
 * streamed one under 100 MB even from the sources through tsx. Only a generous memory bound is asserted, never a time.
 */
import fs from 'node:fs';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeSyntheticCodexStream } from '../../bench/translate.js';
import { BIN, createCliSandbox, type CliSandbox } from '../helpers/cli.js';
import { scaled } from '../helpers/load-scaled.js';

const PEAK_RSS_BOUND_MB = 150;
let sandbox: CliSandbox;
let stream: string;
let expected: ReturnType<typeof writeSyntheticCodexStream>;
let preload: string;

beforeAll(() => {
  sandbox = createCliSandbox();
  stream = path.join(sandbox.root, 'codex.stdout.jsonl');
  expected = writeSyntheticCodexStream(stream, 40 * 1024 * 1024);
  preload = path.join(sandbox.root, 'peak-rss.mjs');
  fs.writeFileSync(
    preload,
    "import fs from 'node:fs';\nprocess.on('exit', () => fs.writeSync(2, `\\nPEAK_RSS_KIB ${process.resourceUsage().maxRSS}\\n`));\n",
  );
});
afterAll(() => sandbox.cleanup());

/** Runs the command with stdout into `out` (a file); returns its status, stderr and peak RSS in MB. */
function translate(args: string[], out: string): { status: number | null; stderr: string; peakMb: number } {
  const fd = fs.openSync(out, 'w');
  try {
    const result = spawnSync(
      process.execPath,
      ['--import', preload, BIN, 'translate', '--engine', 'codex', '--stdout', stream, ...args],
      {
        cwd: sandbox.root,
        env: sandbox.env,
        encoding: 'utf8',
        stdio: ['ignore', fd, 'pipe'],
        timeout: scaled(120_000),
      },
    );
    const kib = Number(/PEAK_RSS_KIB (\d+)/.exec(result.stderr ?? '')?.[1] ?? Number.NaN);
    return { status: result.status, stderr: result.stderr, peakMb: (kib * 1024) / 1e6 };
  } finally {
    fs.closeSync(fd);
  }
}

describe('translate of a long recording', () => {
  it('summarizes 40 MiB with a bounded peak RSS', () => {
    expect(expected.bytes).toBeGreaterThan(40 * 1024 * 1024 - 1);
    const out = path.join(sandbox.root, 'summary.json');
    const run = translate(['--summary'], out);
    expect(run.status, run.stderr).toBe(0);
    expect(JSON.parse(fs.readFileSync(out, 'utf8'))).toEqual({
      engine: 'codex',
      session_id: '01a2053b-9f5a-7bc0-b066-eb965712ebee',
      final_message: expected.finalMessage,
      tool_calls: expected.toolCalls,
      completed: true,
      error: null,
      diagnostics: [],
    });
    expect(run.peakMb).toBeLessThan(PEAK_RSS_BOUND_MB);
  });

  it('writes the FCMP view of 40 MiB as it goes, with a bounded peak RSS', () => {
    const out = path.join(sandbox.root, 'fcmp.jsonl');
    try {
      const run = translate(['--translate', '2'], out);
      expect(run.status, run.stderr).toBe(0);
      const text = fs.readFileSync(out, 'utf8');
      const last = JSON.parse(text.slice(text.lastIndexOf('\n', text.length - 2) + 1)) as { type: string; seq: number };
      expect(last.type).toBe('user.input.required');
      expect(last.seq).toBe(text.split('\n').length - 1);
      expect(run.peakMb).toBeLessThan(PEAK_RSS_BOUND_MB);
    } finally {
      fs.rmSync(out, { force: true });
    }
  });
});
