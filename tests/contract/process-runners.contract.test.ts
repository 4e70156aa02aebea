/**
 * The process runners (split pipes, PTY, util-linux script) on plain shell commands — no engine.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildScriptArgs, runPassthrough, shellQuote, shouldUsePassthrough } from '../../src/runtime/passthrough.js';
import { runProcess } from '../../src/runtime/process.js';
import { runPty } from '../../src/runtime/pty.js';

const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', TERM: 'xterm' };
let dir: string;
beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ah-proc-'));
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

/** True when the process is gone or a zombie. */
function isDead(pid: number): boolean {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z');
  } catch {
    return true;
  }
}

describe('runProcess (split pipes)', () => {
  it('delivers stdout and stderr separately, byte-exact, with the exit code', async () => {
    const chunks: Record<string, Buffer[]> = { stdout: [], stderr: [] };
    const result = await runProcess({ file: 'bash', args: ['-c', 'printf "out\\nπ\\n"; printf "err\\n" >&2; exit 3'], cwd: dir, env, stdin: 'ignore', onChunk: (s, c) => chunks[s]!.push(c) });
    expect(result).toMatchObject({ exitCode: 3, signal: null, timedOut: false, canceled: false, spawnError: null });
    expect(Buffer.concat(chunks.stdout!).toString()).toBe('out\nπ\n');
    expect(Buffer.concat(chunks.stderr!).toString()).toBe('err\n');
  });

  it('passes exactly the given env (nothing inherited)', async () => {
    process.env.AH_SHOULD_NOT_LEAK = 'leak';
    try {
      const out: Buffer[] = [];
      await runProcess({ file: 'bash', args: ['-c', 'echo "${AH_SHOULD_NOT_LEAK:-unset} ${ONLY_THIS}"'], cwd: dir, env: { ...env, ONLY_THIS: 'given' }, stdin: 'ignore', onChunk: (_s, c) => out.push(c) });
      expect(Buffer.concat(out).toString()).toBe('unset given\n');
    } finally {
      delete process.env.AH_SHOULD_NOT_LEAK;
    }
  });

  it('closes stdin with "ignore" and delivers stdin text', async () => {
    const closed = await runProcess({ file: 'cat', args: [], cwd: dir, env, stdin: 'ignore', timeoutMs: 30_000 });
    expect(closed.exitCode).toBe(0);
    const out: Buffer[] = [];
    await runProcess({ file: 'cat', args: [], cwd: dir, env, stdin: { text: 'piped in' }, onChunk: (_s, c) => out.push(c) });
    expect(Buffer.concat(out).toString()).toBe('piped in');
  });

  it('kills the whole process group on timeout, including a TERM-ignoring grandchild holding the pipe', async () => {
    const pidFile = path.join(dir, 'grandchild.pid');
    const started = Date.now();
    const result = await runProcess({
      file: 'bash',
      args: ['-c', `trap "" TERM; sleep 60 & echo $! > ${pidFile}; sleep 60`],
      cwd: dir,
      env,
      stdin: 'ignore',
      timeoutMs: 300,
      killGraceMs: 300,
    });
    expect(result.timedOut).toBe(true);
    expect(result.signal).toBe('SIGKILL');
    expect(Date.now() - started).toBeLessThan(30_000);
    const grandchild = Number(fs.readFileSync(pidFile, 'utf8'));
    await expect.poll(() => isDead(grandchild), { timeout: 10_000 }).toBe(true);
  });

  it('settles when a grandchild keeps stdout open after the child exited', async () => {
    const started = Date.now();
    const result = await runProcess({ file: 'bash', args: ['-c', '(sleep 60 &); echo parent done'], cwd: dir, env, stdin: 'ignore' });
    expect(result.exitCode).toBe(0);
    expect(Date.now() - started).toBeLessThan(30_000);
  });

  it('cancels on abort', async () => {
    const controller = new AbortController();
    const pending = runProcess({ file: 'sleep', args: ['60'], cwd: dir, env, stdin: 'ignore', signal: controller.signal });
    setTimeout(() => controller.abort(), 100);
    const result = await pending;
    expect(result.canceled).toBe(true);
    expect(result.timedOut).toBe(false);
  });

  it('returns a missing executable as spawnError, never throwing', async () => {
    const result = await runProcess({ file: path.join(dir, 'no-such-binary'), args: [], cwd: dir, env, stdin: 'ignore' });
    expect(result.pid).toBeNull();
    expect(result.exitCode).toBeNull();
    expect(result.spawnError?.message).toContain('ENOENT');
  });
});

describe('runPty', () => {
  it('gives one CRLF stream, the exit code and script-style timing lines', async () => {
    const chunks: Buffer[] = [];
    const timing: string[] = [];
    const result = await runPty({ file: 'bash', args: ['-c', 'echo out; echo err >&2; exit 4'], cwd: dir, env, onChunk: (_s, c) => chunks.push(c), onTiming: (l) => timing.push(l) });
    expect(result.exitCode).toBe(4);
    const text = Buffer.concat(chunks).toString();
    expect(text).toContain('out\r\n');
    expect(text).toContain('err\r\n');
    const bytes = timing.map((line) => {
      expect(line).toMatch(/^\d+\.\d{6} \d+$/);
      return Number(line.split(' ')[1]);
    });
    expect(bytes.reduce((a, b) => a + b, 0)).toBe(Buffer.concat(chunks).byteLength);
  });

  it('times out and kills the child', async () => {
    const result = await runPty({ file: 'sleep', args: ['60'], cwd: dir, env, timeoutMs: 200 });
    expect(result.timedOut).toBe(true);
    expect(result.exitCode).toBeNull();
  });
});

describe('util-linux script passthrough', () => {
  it('builds argv without a positional typescript file and quotes hostile arguments', () => {
    const hostile = ["it's", '$(touch pwned)', 'a"b', 'new\nline', '`x`', ''];
    const args = buildScriptArgs('/bin/echo', hostile, '/tmp/out.log', '/tmp/t.log');
    expect(args.slice(0, 6)).toEqual(['-q', '-e', '--log-out', '/tmp/out.log', '--log-timing', '/tmp/t.log']);
    expect(args[6]).toBe('-c');
    expect(args).toHaveLength(8);
    expect(shellQuote('plain-arg_1.txt')).toBe('plain-arg_1.txt');
  });

  it('runs under script without a terminal, records the log and returns the exit code', async () => {
    const logOut = path.join(dir, 'pty-output.log');
    const logTiming = path.join(dir, 'pty-timing.log');
    const hostile = '$(touch pwned) it\'s "quoted"';
    const result = await runPassthrough({ file: 'bash', args: ['-c', 'printf "%s\\n" "$1"; exit 3', 'x', hostile], cwd: dir, env, logOut, logTiming, stdin: 'ignore' });
    expect(result.exitCode).toBe(3);
    expect(fs.readFileSync(logOut, 'utf8')).toContain(`${hostile}\r\n`);
    expect(fs.existsSync(path.join(dir, 'pwned'))).toBe(false);
    expect(fs.readFileSync(logTiming, 'utf8').trim().length).toBeGreaterThan(0);
  });

  it('uses live passthrough only for view 0 with all three streams on a terminal', () => {
    expect(shouldUsePassthrough({ translate: 0, stdinIsTTY: true, stdoutIsTTY: true, stderrIsTTY: true })).toBe(true);
    expect(shouldUsePassthrough({ translate: 1, stdinIsTTY: true, stdoutIsTTY: true, stderrIsTTY: true })).toBe(false);
    expect(shouldUsePassthrough({ translate: 0, stdinIsTTY: false, stdoutIsTTY: true, stderrIsTTY: true })).toBe(false);
    expect(shouldUsePassthrough({ translate: 0, stdinIsTTY: true, stdoutIsTTY: true, stderrIsTTY: false })).toBe(false);
  });
});
