/**
 * runProcess (split pipes) on plain shell commands — no engine CLI. Timing assertions are generous on purpose:
 * this runs on loaded 2-core machines.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runProcess } from '../../src/runtime/process.js';
import { withGrowingTimeout } from '../helpers/processes.js';
import { scaled } from '../helpers/load-scaled.js';

const env = { PATH: process.env.PATH ?? '/usr/local/bin:/usr/bin:/bin' };
let dir: string;
beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ah-runtime-process-'));
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

/** True when the process is gone or a zombie (`kill(pid, 0)` succeeds on zombies). */
function isDead(pid: number): boolean {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z');
  } catch {
    return true;
  }
}

/** Collects chunks per stream and checks each one is a Buffer. */
function collector(): {
  onChunk: (stream: 'stdout' | 'stderr', chunk: Buffer) => void;
  text: (stream: 'stdout' | 'stderr') => string;
  count: (stream: 'stdout' | 'stderr') => number;
} {
  const chunks = { stdout: [] as Buffer[], stderr: [] as Buffer[] };
  return {
    onChunk: (stream, chunk) => {
      expect(Buffer.isBuffer(chunk)).toBe(true);
      chunks[stream].push(chunk);
    },
    text: (stream) => Buffer.concat(chunks[stream]).toString('utf8'),
    count: (stream) => chunks[stream].length,
  };
}

describe('runProcess output', () => {
  it('delivers stdout and stderr as separate raw chunks that concatenate to what was written', async () => {
    const out = collector();
    const script =
      'for i in 1 2 3; do printf "out$i π\\n"; printf "err$i\\n" >&2; sleep 0.05; done; printf "no newline"';
    const result = await runProcess({
      file: 'bash',
      args: ['-c', script],
      cwd: dir,
      env,
      stdin: 'ignore',
      onChunk: out.onChunk,
    });
    expect(result).toMatchObject({ exitCode: 0, signal: null, timedOut: false, canceled: false, spawnError: null });
    expect(result.pid).toBeGreaterThan(0);
    expect(out.text('stdout')).toBe('out1 π\nout2 π\nout3 π\nno newline');
    expect(out.text('stderr')).toBe('err1\nerr2\nerr3\n');
    expect(out.count('stdout')).toBeGreaterThanOrEqual(1);
  });

  it('passes binary output through byte-exact', async () => {
    const chunks: Buffer[] = [];
    await runProcess({
      file: 'node',
      args: ['-e', 'process.stdout.write(Buffer.from([0, 255, 10, 13, 200]))'],
      cwd: dir,
      env,
      stdin: 'ignore',
      onChunk: (_s, c) => chunks.push(c),
    });
    expect([...Buffer.concat(chunks)]).toEqual([0, 255, 10, 13, 200]);
  });

  it('reports exit codes and signals', async () => {
    const failed = await runProcess({ file: 'bash', args: ['-c', 'exit 7'], cwd: dir, env, stdin: 'ignore' });
    expect(failed).toMatchObject({ exitCode: 7, signal: null, spawnError: null });
    const signaled = await runProcess({ file: 'bash', args: ['-c', 'kill -USR1 $$'], cwd: dir, env, stdin: 'ignore' });
    expect(signaled).toMatchObject({ exitCode: null, signal: 'SIGUSR1', timedOut: false, canceled: false });
  });
});

describe('runProcess environment and stdin', () => {
  it('gives the child exactly the env passed (env -i semantics)', async () => {
    process.env.AH_RUNTIME_HOST_ONLY = 'leak';
    try {
      const out = collector();
      await runProcess({
        file: 'node',
        args: ['-e', 'process.stdout.write(JSON.stringify(process.env))'],
        cwd: dir,
        env: { PATH: env.PATH, ONLY_THIS: 'given' },
        stdin: 'ignore',
        onChunk: out.onChunk,
      });
      const childEnv = JSON.parse(out.text('stdout')) as Record<string, string>;
      expect(childEnv.ONLY_THIS).toBe('given');
      expect(childEnv.AH_RUNTIME_HOST_ONLY).toBeUndefined();
      expect(childEnv.HOME).toBeUndefined();
      expect(Object.keys(childEnv).sort()).toEqual(['ONLY_THIS', 'PATH']);
    } finally {
      delete process.env.AH_RUNTIME_HOST_ONLY;
    }
  });

  it('runs in the given cwd', async () => {
    const out = collector();
    await runProcess({
      file: 'node',
      args: ['-e', 'process.stdout.write(process.cwd())'],
      cwd: dir,
      env,
      stdin: 'ignore',
      onChunk: out.onChunk,
    });
    expect(fs.realpathSync(out.text('stdout'))).toBe(fs.realpathSync(dir));
  });

  it('gives EOF at once with stdin "ignore" (cat exits)', async () => {
    const result = await runProcess({
      file: 'cat',
      args: [],
      cwd: dir,
      env,
      stdin: 'ignore',
      timeoutMs: scaled(20_000),
      killGraceMs: 500,
    });
    expect(result).toMatchObject({ exitCode: 0, timedOut: false });
  });

  it('delivers stdin text and then EOF', async () => {
    const out = collector();
    const text = 'line one\nπ line two\nno newline at end';
    const result = await runProcess({
      file: 'cat',
      args: [],
      cwd: dir,
      env,
      stdin: { text },
      timeoutMs: scaled(20_000),
      onChunk: out.onChunk,
    });
    expect(result).toMatchObject({ exitCode: 0, timedOut: false });
    expect(out.text('stdout')).toBe(text);
  });
});

describe('runProcess termination', () => {
  // No test here measures how long it took: the processes sleep for 10 minutes, so a kill that did not happen leaves
  // the test to its own timeout. A timeout case runs again with a longer timeout while the shell had not yet written
  // its grandchild's pid when it fired (a slow start on a loaded machine).
  it('on timeout kills a TERM-ignoring child and its grandchild holding the pipe', async () => {
    const pidFile = path.join(dir, 'timeout-grandchild.pid');
    const result = await withGrowingTimeout(
      (timeoutMs) =>
        runProcess({
          file: 'bash',
          args: ['-c', `trap "" TERM; sleep 600 & echo $! > ${pidFile}; sleep 600`],
          cwd: dir,
          env,
          stdin: 'ignore',
          timeoutMs,
          killGraceMs: 500,
        }),
      () => fs.existsSync(pidFile),
      500,
      16_000,
    );
    expect(result).toMatchObject({
      timedOut: true,
      canceled: false,
      exitCode: null,
      signal: 'SIGKILL',
      spawnError: null,
    });
    const grandchild = Number(fs.readFileSync(pidFile, 'utf8'));
    expect(grandchild).toBeGreaterThan(0);
    await expect.poll(() => isDead(grandchild), { timeout: scaled(30_000) }).toBe(true);
  });

  it('on timeout kills a TERM-ignoring grandchild even when the child itself dies on SIGTERM', async () => {
    const pidFile = path.join(dir, 'term-grandchild.pid');
    const result = await withGrowingTimeout(
      (timeoutMs) =>
        runProcess({
          file: 'bash',
          args: ['-c', `bash -c 'trap "" TERM; sleep 600' & echo $! > ${pidFile}; sleep 600`],
          cwd: dir,
          env,
          stdin: 'ignore',
          timeoutMs,
          killGraceMs: 10_000,
        }),
      () => fs.existsSync(pidFile),
      500,
      16_000,
    );
    expect(result).toMatchObject({ timedOut: true, signal: 'SIGTERM' });
    const grandchild = Number(fs.readFileSync(pidFile, 'utf8'));
    await expect.poll(() => isDead(grandchild), { timeout: scaled(30_000) }).toBe(true);
  });

  it('settles and cleans up when a grandchild keeps stdout open after the child exited', async () => {
    const pidFile = path.join(dir, 'holder.pid');
    const out = collector();
    const result = await runProcess({
      file: 'bash',
      args: ['-c', `sleep 600 & echo $! > ${pidFile}; echo parent done`],
      cwd: dir,
      env,
      stdin: 'ignore',
      onChunk: out.onChunk,
    });
    expect(result).toMatchObject({ exitCode: 0, timedOut: false, canceled: false });
    expect(out.text('stdout')).toBe('parent done\n');
    const holder = Number(fs.readFileSync(pidFile, 'utf8'));
    await expect.poll(() => isDead(holder), { timeout: scaled(30_000) }).toBe(true);
  });

  it('cancels on abort and kills the group', async () => {
    const controller = new AbortController();
    const out = collector();
    const pending = runProcess({
      file: 'bash',
      args: ['-c', 'echo started; sleep 600'],
      cwd: dir,
      env,
      stdin: 'ignore',
      signal: controller.signal,
      killGraceMs: 500,
      onChunk: (s, c) => {
        out.onChunk(s, c);
        controller.abort();
      },
    });
    const result = await pending;
    expect(result).toMatchObject({ canceled: true, timedOut: false, exitCode: null, signal: 'SIGTERM' });
  });

  it('does not start at all when already aborted', async () => {
    const result = await runProcess({
      file: 'sleep',
      args: ['30'],
      cwd: dir,
      env,
      stdin: 'ignore',
      signal: AbortSignal.abort(),
    });
    expect(result).toMatchObject({ pid: null, canceled: true, spawnError: null });
  });
});

describe('runProcess spawn failures', () => {
  it('returns a missing executable as spawnError, never throwing', async () => {
    const result = await runProcess({
      file: path.join(dir, 'no-such-binary'),
      args: [],
      cwd: dir,
      env,
      stdin: 'ignore',
    });
    expect(result).toMatchObject({ pid: null, exitCode: null, signal: null, timedOut: false, canceled: false });
    expect(result.spawnError).toBeInstanceOf(Error);
    expect((result.spawnError as NodeJS.ErrnoException).code).toBe('ENOENT');
  });

  it('returns a name missing from the given PATH as spawnError', async () => {
    const result = await runProcess({ file: 'ah-no-such-command', args: [], cwd: dir, env, stdin: 'ignore' });
    expect((result.spawnError as NodeJS.ErrnoException | null)?.code).toBe('ENOENT');
  });

  it('returns a missing cwd as spawnError', async () => {
    const result = await runProcess({
      file: 'bash',
      args: ['-c', 'true'],
      cwd: path.join(dir, 'missing-dir'),
      env,
      stdin: 'ignore',
    });
    expect(result.pid).toBeNull();
    expect(result.spawnError).toBeInstanceOf(Error);
  });
});
