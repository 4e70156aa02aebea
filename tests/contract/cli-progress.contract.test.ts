/**
 * Progress of a running attempt on the CLI: a fake codex prints its first events (session, turn, a tool call) and
 * then waits for a release file the test writes only once the progress has been seen — no clock in the assertions.
 * Under a PTY (util-linux `script`) the status line shows engine · handle · turn · tool calls · elapsed on stderr;
 * without a terminal, `agent-harness: progress:` lines come at the interval AGENT_HARNESS_PROGRESS_INTERVAL_MS, and
 * stdout carries only the view.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { FcmpEventSchema } from '../../src/protocol/index.js';
import { BIN, runCliProcess, useGatedCodexSandbox } from '../helpers/cli.js';

const gated = useGatedCodexSandbox();

/** Runs `command` (argv) until it exits; `onOutput` sees the output so far and may release the engine. */
async function runUntilExit(
  argv: string[],
  env: NodeJS.ProcessEnv,
  onOutput: (stdout: string, stderr: string) => void,
): Promise<{ status: number | null; stdout: string; stderr: string }> {
  fs.rmSync(gated.release, { force: true });
  const child = spawn(argv[0]!, argv.slice(1), { cwd: gated.sandbox.root, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c: Buffer) => {
    stdout += c.toString();
    onOutput(stdout, stderr);
  });
  child.stderr.on('data', (c: Buffer) => {
    stderr += c.toString();
    onOutput(stdout, stderr);
  });
  const status = await new Promise<number | null>((resolve) => child.on('close', resolve));
  return { status, stdout, stderr };
}

describe('progress of a running attempt', () => {
  it('shows a status line on a terminal (stderr is a PTY), cleared before the summary', async () => {
    const command = [
      process.execPath,
      BIN,
      'start',
      '--timeout-ms',
      '120000',
      '--translate',
      '3',
      '--prompt',
      'slow',
      'codex',
    ]
      .map((a) => `'${a}'`)
      .join(' ');
    const status = /codex · [0-9a-f]{8} · turn 1 · 1 tool call · \d+s/;
    const run = await runUntilExit(['script', '-q', '-e', '-c', command, '/dev/null'], gated.sandbox.env, (stdout) => {
      if (status.test(stdout)) fs.writeFileSync(gated.release, '');
    });
    expect(run.status, run.stdout).toBe(0);
    expect(run.stdout).toMatch(status);
    // Drawn in place (carriage return + erase line), and erased before the view and the summary are printed.
    expect(run.stdout).toContain('\r\u001b[2Kcodex · ');
    expect(run.stdout).toMatch(/\r\u001b\[2K### Simulated Frontend View/);
    expect(run.stdout).toContain('- Assistant: DONE');
  });

  it('prints progress lines on stderr at the interval without a terminal, and keeps stdout the view alone', async () => {
    const run = await runUntilExit(
      [process.execPath, BIN, 'start', '--timeout-ms', '120000', '--translate', '2', '--prompt', 'slow', 'codex'],
      { ...gated.sandbox.env, AGENT_HARNESS_PROGRESS_INTERVAL_MS: '50' },
      (_stdout, stderr) => {
        if (/agent-harness: progress: codex · [0-9a-f]{8} · turn 1 · 1 tool call · /.test(stderr))
          fs.writeFileSync(gated.release, '');
      },
    );
    expect(run.status, run.stderr).toBe(0);
    expect(run.stderr).toMatch(/^agent-harness: progress: codex · [0-9a-f]{8} · turn 1 · 1 tool call · \d+s$/m);
    expect(run.stderr).not.toContain('\u001b[2K');
    const lines = run.stdout.trim().split('\n');
    for (const line of lines) FcmpEventSchema.parse(JSON.parse(line));
    expect(run.stdout).not.toContain('progress');
  });

  it('refuses an interval that is not a whole number of milliseconds', () => {
    const bad = runCliProcess(gated.sandbox, ['start', '--prompt', 'x', 'codex'], {
      AGENT_HARNESS_PROGRESS_INTERVAL_MS: '30s',
    });
    expect(bad.status).not.toBe(0);
    expect(bad.stderr).toContain('error CONFIG_INVALID');
    expect(bad.stderr).toContain('AGENT_HARNESS_PROGRESS_INTERVAL_MS');
  });
});
