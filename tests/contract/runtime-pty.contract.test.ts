/**
 * runPty (node-pty) and the util-linux `script` passthrough on plain shell commands — no engine CLI, no real
 * terminal needed (`script` records without one). Timing assertions are generous on purpose.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  buildScriptArgs,
  findScriptBinary,
  runPassthrough,
  shellQuote,
  shouldUsePassthrough,
} from '../../src/runtime/passthrough.js';
import { runPty } from '../../src/runtime/pty.js';
import { withGrowingTimeout } from '../helpers/processes.js';
import { scaled } from '../helpers/load-scaled.js';

const env = { PATH: process.env.PATH ?? '/usr/local/bin:/usr/bin:/bin', TERM: 'xterm' };
let dir: string;
beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ah-runtime-pty-'));
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

describe('runPty', () => {
  it('gives one CRLF stream, the exit code, and script timing lines whose byte counts sum to the output', async () => {
    const chunks: Buffer[] = [];
    const timing: string[] = [];
    const result = await runPty({
      file: 'bash',
      args: [
        '-c',
        'echo out; sleep 0.1; echo err >&2; sleep 0.1; test -t 1 && t=yes; printf "π tty:%s\\n" "$t"; exit 4',
      ],
      cwd: dir,
      env,
      onChunk: (stream, chunk) => {
        expect(stream).toBe('pty');
        expect(Buffer.isBuffer(chunk)).toBe(true);
        chunks.push(chunk);
      },
      onTiming: (line) => timing.push(line),
    });
    expect(result).toMatchObject({ exitCode: 4, signal: null, timedOut: false, canceled: false, spawnError: null });
    const output = Buffer.concat(chunks);
    expect(output.toString('utf8')).toBe('out\r\nerr\r\nπ tty:yes\r\n');
    expect(timing).toHaveLength(chunks.length);
    let total = 0;
    for (const line of timing) {
      expect(line).toMatch(/^\d+\.\d{6} \d+$/);
      const [seconds, bytes] = line.split(' ').map(Number);
      expect(seconds).toBeGreaterThanOrEqual(0);
      total += bytes!;
    }
    expect(total).toBe(output.byteLength);
  });

  it("passes the env through (plus node-pty's PWD and TERM) and writes input once", async () => {
    const chunks: Buffer[] = [];
    const result = await runPty({
      file: 'bash',
      args: ['-c', 'read -r line; echo "got:$line ${HOME:-nohome} ${ONLY_THIS} ${TERM}"'],
      cwd: dir,
      env: { ...env, ONLY_THIS: 'given' },
      input: 'hello\r',
      onChunk: (_s, c) => chunks.push(c),
    });
    expect(result.exitCode).toBe(0);
    expect(Buffer.concat(chunks).toString()).toContain('got:hello nohome given xterm\r\n');
  });

  it('keeps the last bytes of a process that writes fast and exits (libuv ends the stream at a short read after hang-up)', async () => {
    // Without the drain at `end`, about one run in four lost the tail of its megabyte here.
    const lengths: number[] = [];
    for (let run = 0; run < 20; run++) {
      let length = 0;
      const result = await runPty({
        file: 'bash',
        args: ['-c', 'head -c 1000000 /dev/zero | tr "\\0" x'],
        cwd: dir,
        env,
        onChunk: (_s, c) => (length += c.byteLength),
      });
      expect(result.exitCode).toBe(0);
      lengths.push(length);
    }
    expect(lengths).toEqual(Array(20).fill(1_000_000));
  });

  // No test here measures how long it took: the processes sleep for 10 minutes, so a kill that did not happen leaves
  // the test to its own timeout. A timeout case runs again with a longer timeout while the shell had not yet written
  // its grandchild's pid when it fired (a slow start on a loaded machine).
  it('times out, kills the session group including a TERM-ignoring grandchild, and settles', async () => {
    const pidFile = path.join(dir, 'pty-grandchild.pid');
    const result = await withGrowingTimeout(
      (timeoutMs) =>
        runPty({
          file: 'bash',
          args: ['-c', `trap "" TERM HUP; sleep 600 & echo $! > ${pidFile}; sleep 600`],
          cwd: dir,
          env,
          timeoutMs,
          killGraceMs: 500,
        }),
      () => fs.existsSync(pidFile),
      500,
      16_000,
    );
    expect(result).toMatchObject({ timedOut: true, canceled: false, exitCode: null, signal: 'SIGKILL' });
    const grandchild = Number(fs.readFileSync(pidFile, 'utf8'));
    await expect.poll(() => isDead(grandchild), { timeout: scaled(30_000) }).toBe(true);
  });

  it('cancels on abort', async () => {
    const controller = new AbortController();
    const pending = runPty({
      file: 'bash',
      args: ['-c', 'echo ready; sleep 600'],
      cwd: dir,
      env,
      signal: controller.signal,
      killGraceMs: 500,
      onChunk: () => controller.abort(),
    });
    const result = await pending;
    expect(result).toMatchObject({ canceled: true, timedOut: false, exitCode: null });
    expect(result.signal).not.toBeNull();
  });

  it('returns a missing executable or cwd as spawnError, never throwing', async () => {
    const missing = await runPty({ file: path.join(dir, 'no-such-binary'), args: [], cwd: dir, env });
    expect(missing).toMatchObject({ pid: null, exitCode: null });
    expect((missing.spawnError as NodeJS.ErrnoException | null)?.code).toBe('ENOENT');
    const notOnPath = await runPty({ file: 'ah-no-such-command', args: [], cwd: dir, env });
    expect((notOnPath.spawnError as NodeJS.ErrnoException | null)?.code).toBe('ENOENT');
    const badCwd = await runPty({ file: 'bash', args: ['-c', 'true'], cwd: path.join(dir, 'missing-dir'), env });
    expect(badCwd.spawnError).toBeInstanceOf(Error);
  });
});

describe('util-linux script passthrough', () => {
  const hostile = [
    '$(touch pwned)',
    '`touch pwned2`',
    "it's",
    'a"b',
    'new\nline',
    'tab\there',
    '$HOME',
    '\\',
    '',
    ';rm -rf /',
    '*',
  ];

  it('builds argv with no positional typescript argument', () => {
    const args = buildScriptArgs('/bin/echo', hostile, '/tmp/out.log', '/tmp/timing.log');
    expect(args).toEqual([
      '-q',
      '-e',
      '--log-out',
      '/tmp/out.log',
      '--log-timing',
      '/tmp/timing.log',
      '-c',
      expect.any(String),
    ]);
    expect(args).toHaveLength(8);
  });

  it('quotes hostile arguments so bash -c sees them literally', () => {
    const command = buildScriptArgs('printf', ['%s\\0', ...hostile], 'o', 't')[7]!;
    const seen = execFileSync('bash', ['-c', command], { cwd: dir, env, stdio: ['ignore', 'pipe', 'pipe'] })
      .toString('utf8')
      .split('\0')
      .slice(0, -1);
    expect(seen).toEqual(hostile);
    expect(fs.existsSync(path.join(dir, 'pwned'))).toBe(false);
    expect(fs.existsSync(path.join(dir, 'pwned2'))).toBe(false);
    expect(shellQuote('plain-arg_1.txt')).toBe('plain-arg_1.txt');
    expect(shellQuote("it's")).toBe(`'it'\\''s'`);
  });

  it('finds util-linux script', () => {
    const script = findScriptBinary();
    expect(script).not.toBeNull();
    expect(fs.existsSync(script!)).toBe(true);
    expect(findScriptBinary(path.join(dir, 'empty-path'))).toBeNull();
  });

  it('runs under script without a terminal, logs the output and returns the exit code', async () => {
    const logOut = path.join(dir, 'pty-output.log');
    const logTiming = path.join(dir, 'pty-timing.log');
    const arg = '$(touch pwned3) it\'s "quoted"';
    const result = await runPassthrough({
      file: 'bash',
      args: ['-c', 'echo hi; printf "%s\\n" "$1"; exit 3', 'x', arg],
      cwd: dir,
      env,
      logOut,
      logTiming,
      stdin: 'ignore',
      stdout: 'ignore',
      timeoutMs: scaled(30_000),
    });
    expect(result).toMatchObject({ exitCode: 3, timedOut: false, canceled: false, spawnError: null });
    const log = fs.readFileSync(logOut, 'utf8');
    expect(log).toContain('hi\r\n');
    expect(log).toContain(`${arg}\r\n`);
    expect(log).toContain('COMMAND_EXIT_CODE="3"');
    expect(fs.existsSync(path.join(dir, 'pwned3'))).toBe(false);
    const timing = fs.readFileSync(logTiming, 'utf8').trim().split('\n');
    for (const line of timing) expect(line).toMatch(/^\d+\.\d+ \d+$/);
  });

  it('kills the command under script on timeout, TERM-ignoring grandchild included', async () => {
    const pidFile = path.join(dir, 'script-grandchild.pid');
    const result = await withGrowingTimeout(
      (timeoutMs) =>
        runPassthrough({
          file: 'bash',
          args: ['-c', `trap "" TERM; sleep 600 & echo $! > ${pidFile}; sleep 600`],
          cwd: dir,
          env,
          logOut: path.join(dir, 'timeout-output.log'),
          logTiming: path.join(dir, 'timeout-timing.log'),
          stdin: 'ignore',
          stdout: 'ignore',
          timeoutMs,
          killGraceMs: 500,
        }),
      () => fs.existsSync(pidFile),
      500,
      16_000,
    );
    expect(result).toMatchObject({ timedOut: true, canceled: false, spawnError: null });
    expect(result.exitCode === 0).toBe(false);
    const grandchild = Number(fs.readFileSync(pidFile, 'utf8'));
    expect(grandchild).toBeGreaterThan(0);
    await expect.poll(() => isDead(grandchild), { timeout: scaled(30_000) }).toBe(true);
  });

  it('uses live passthrough only for view 0 with all three streams on a terminal', () => {
    const tty = { stdinIsTTY: true, stdoutIsTTY: true, stderrIsTTY: true };
    expect(shouldUsePassthrough({ translate: 0, ...tty })).toBe(true);
    expect(shouldUsePassthrough({ translate: 1, ...tty })).toBe(false);
    expect(shouldUsePassthrough({ translate: 3, ...tty })).toBe(false);
    expect(shouldUsePassthrough({ translate: 0, ...tty, stdinIsTTY: false })).toBe(false);
    expect(shouldUsePassthrough({ translate: 0, ...tty, stdoutIsTTY: false })).toBe(false);
    expect(shouldUsePassthrough({ translate: 0, ...tty, stderrIsTTY: false })).toBe(false);
  });
});
