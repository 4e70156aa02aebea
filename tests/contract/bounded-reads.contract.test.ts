/**
 * Reads are bounded: files from user-given paths must be regular files (a FIFO or /dev/zero would hang or grow
 * without end), model scripts have a size limit, translate streams its inputs with a line-length bound, and a
 * translate interrupted by SIGTERM exits 143 at once. Each CLI case runs the real `bin/agent-harness.js`, with
 * a timeout so that a regression fails instead of hanging the suite. No timing is asserted.
 */
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLineSplitter } from '../../src/translate/line-splitter.js';
import { BIN, createCliSandbox, installFakeEngine, REPO, type CliRun, type CliSandbox } from '../helpers/cli.js';
import { scaled } from '../helpers/load-scaled.js';

const STREAMS = path.join(REPO, 'fixtures', 'streams', 'codex');
const SESSION = '01a2053b-9f5a-7bc0-b066-eb965712ebee';
/** Long enough for the CLI's startup on a loaded machine; a hanging read is killed at this point. */
const HANG_TIMEOUT_MS = scaled(60_000);
const MiB = 1024 * 1024;

let sandbox: CliSandbox;
let fifo: string;
let big: string;

function run(args: string[], extraEnv: NodeJS.ProcessEnv = {}, preload?: string): CliRun {
  const result = spawnSync(
    process.execPath,
    [...(preload ? ['--import', pathToFileURL(preload).href] : []), BIN, ...args],
    {
      cwd: sandbox.root,
      env: { ...sandbox.env, ...extraEnv },
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
      timeout: HANG_TIMEOUT_MS,
      killSignal: 'SIGKILL',
      maxBuffer: 64 * MiB,
    },
  );
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

function line(value: unknown): string {
  return `${JSON.stringify(value)}\n`;
}

/** A valid codex turn of about `bytes` bytes: most of it plan updates, which the parser records nothing for. */
function writeLongTurn(file: string, bytes: number): void {
  const fd = fs.openSync(file, 'w');
  fs.writeSync(fd, line({ type: 'thread.started', thread_id: SESSION }) + line({ type: 'turn.started' }));
  const items = Array.from({ length: 40 }, (_, i) => ({ text: `step ${i} ${'y'.repeat(90)}`, completed: false }));
  const update = line({ type: 'item.updated', item: { id: 'item_0', type: 'todo_list', items } });
  const block = update.repeat(Math.ceil(MiB / update.length));
  for (let written = 0; written < bytes; written += block.length) fs.writeSync(fd, block);
  fs.writeSync(fd, line({ type: 'item.completed', item: { id: 'item_1', type: 'agent_message', text: 'DONE' } }));
  fs.writeSync(
    fd,
    line({ type: 'turn.completed', usage: { input_tokens: 1, cached_input_tokens: 0, output_tokens: 1 } }),
  );
  fs.closeSync(fd);
}

function expectCode(result: CliRun, code: string): void {
  expect(result.status, result.stderr).toBe(1);
  expect(result.stderr).toContain(`error ${code}:`);
  expect(result.stderr).not.toMatch(/^\s+at /m);
}

beforeAll(() => {
  sandbox = createCliSandbox();
  installFakeEngine(sandbox, 'codex', { stdoutFile: path.join(STREAMS, 'turn1.stdout.jsonl') });
  fifo = path.join(sandbox.root, 'input.fifo');
  execFileSync('mkfifo', [fifo]);
  big = path.join(sandbox.root, 'big.stdout.jsonl');
  writeLongTurn(big, 64 * MiB);
});
afterAll(() => sandbox.cleanup());

describe('translate inputs', () => {
  it('refuses /dev/zero, a FIFO and a directory with INPUT_NOT_REGULAR_FILE before reading', () => {
    expectCode(run(['translate', '--engine', 'codex', '--stdout', '/dev/zero', '--summary']), 'INPUT_NOT_REGULAR_FILE');
    expectCode(run(['translate', '--engine', 'codex', '--stderr', fifo, '--summary']), 'INPUT_NOT_REGULAR_FILE');
    // Checked before anything is read: a good --stdout does not get the FIFO read after it.
    expectCode(
      run(['translate', '--engine', 'codex', '--stdout', path.join(STREAMS, 'turn1.stdout.jsonl'), '--pty', fifo]),
      'INPUT_NOT_REGULAR_FILE',
    );
    expectCode(
      run(['translate', '--engine', 'codex', '--stdout', sandbox.root, '--summary']),
      'INPUT_NOT_REGULAR_FILE',
    );
  });

  it('streams a 64 MiB recording with memory well below its size', () => {
    const rssFile = path.join(sandbox.root, 'maxrss.txt');
    const preload = path.join(sandbox.root, 'maxrss.mjs');
    fs.writeFileSync(
      preload,
      `import fs from 'node:fs';\nprocess.on('exit', () => fs.writeFileSync(${JSON.stringify(rssFile)}, String(process.resourceUsage().maxRSS)));\n`,
    );
    const maxRssKiB = (args: string[]): { result: CliRun; kib: number } => {
      fs.rmSync(rssFile, { force: true });
      const result = run(args, {}, preload);
      return { result, kib: Number(fs.readFileSync(rssFile, 'utf8')) };
    };
    // The CLI's own footprint (node + tsx + sources) varies by machine: measure it rather than assume it.
    const idle = maxRssKiB(['--version']);
    const big64 = maxRssKiB(['translate', '--engine', 'codex', '--stdout', big, '--summary']);
    expect(big64.result.status, big64.result.stderr).toBe(0);
    expect(JSON.parse(big64.result.stdout)).toMatchObject({
      session_id: SESSION,
      final_message: 'DONE',
      completed: true,
      diagnostics: [],
    });
    // Holding the file (64 MiB) plus its decoded lines would add well over 100 MiB.
    expect((big64.kib - idle.kib) / 1024).toBeLessThan(96);
  });

  it('turns a line longer than 16 MiB into a LINE_TOO_LONG diagnostic and parses the rest', () => {
    const file = path.join(sandbox.root, 'long-line.stdout.jsonl');
    const stream = fs.readFileSync(path.join(STREAMS, 'turn1.stdout.jsonl'), 'utf8').split('\n');
    fs.writeFileSync(
      file,
      `${stream[0]}\n${line({ type: 'item.completed', item: { id: 'huge', type: 'agent_message', text: 'z'.repeat(17 * MiB) } })}${stream.slice(1).join('\n')}`,
    );
    const result = run(['translate', '--engine', 'codex', '--stdout', file, '--summary']);
    expect(result.status, result.stderr).toBe(0);
    const summary = JSON.parse(result.stdout) as {
      completed: boolean;
      final_message: string;
      diagnostics: Array<{ code: string }>;
    };
    expect(summary).toMatchObject({ completed: true, final_message: 'DONE' });
    expect(summary.diagnostics.map((d) => d.code)).toEqual(['LINE_TOO_LONG']);
  });

  // Knowing when the input is open needs Linux's /proc.
  it.skipIf(!fs.existsSync('/proc/self/fd'))(
    'exits 143 with a short INTERRUPTED message when SIGTERM arrives mid-translation',
    async () => {
      const child = spawn(process.execPath, [BIN, 'translate', '--engine', 'codex', '--stdout', big, '--summary'], {
        cwd: sandbox.root,
        env: sandbox.env,
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let stderr = '';
      child.stderr.setEncoding('utf8').on('data', (s: string) => (stderr += s));
      child.stdout.resume();
      const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
        child.on('exit', (code, signal) => resolve({ code, signal })),
      );
      const killer = setTimeout(() => child.kill('SIGKILL'), HANG_TIMEOUT_MS);
      // Send the signal once the input is open: translate's handlers are installed by then.
      const fdDir = `/proc/${child.pid}/fd`;
      const isReading = (): boolean => {
        try {
          return fs.readdirSync(fdDir).some((fd) => {
            try {
              return fs.readlinkSync(path.join(fdDir, fd)) === big;
            } catch {
              return false;
            }
          });
        } catch {
          return false;
        }
      };
      let done = false;
      void exited.then(() => (done = true));
      while (!done && !isReading()) await new Promise((resolve) => setTimeout(resolve, 5));
      child.kill('SIGTERM');
      const end = await exited;
      clearTimeout(killer);
      expect(end, stderr).toEqual({ code: 143, signal: null });
      expect(stderr).toContain('error INTERRUPTED: translate was stopped by SIGTERM');
      expect(stderr).not.toMatch(/^\s+at /m);
    },
    HANG_TIMEOUT_MS + 10_000,
  );
});

describe('other inputs', () => {
  it('refuses a FIFO or /dev/zero as a `start --file DEST=SRC` source', () => {
    expectCode(run(['start', '--file', `seed.txt=${fifo}`, '--prompt', 'hi', 'codex']), 'INPUT_NOT_REGULAR_FILE');
    expectCode(run(['start', '--file', 'seed.txt=/dev/zero', '--prompt', 'hi', 'codex']), 'INPUT_NOT_REGULAR_FILE');
  });
});

describe('model scripts', () => {
  const script = (): string => {
    const file = path.join(sandbox.root, 'script.json');
    fs.writeFileSync(
      file,
      JSON.stringify({ turns: [{ type: 'final', text: 'all done here, nothing else to do', done: true }] }),
    );
    return file;
  };

  it('refuses a FIFO given to `model serve --script` and `start --script`', () => {
    expectCode(run(['model', 'serve', '--script', fifo]), 'INPUT_NOT_REGULAR_FILE');
    expectCode(run(['start', '--script', fifo, '--prompt', 'hi', 'codex']), 'INPUT_NOT_REGULAR_FILE');
  });

  it('refuses a script past 16 MiB, or past AGENT_HARNESS_MAX_SCRIPT_BYTES, with INPUT_TOO_LARGE', () => {
    const huge = path.join(sandbox.root, 'huge-script.json');
    fs.writeFileSync(huge, '');
    fs.truncateSync(huge, 16 * MiB + 1);
    const tooBig = run(['model', 'serve', '--script', huge]);
    expectCode(tooBig, 'INPUT_TOO_LARGE');
    expect(tooBig.stderr).toContain('AGENT_HARNESS_MAX_SCRIPT_BYTES');
    expectCode(
      run(['start', '--script', script(), '--prompt', 'hi', 'codex'], { AGENT_HARNESS_MAX_SCRIPT_BYTES: '32' }),
      'INPUT_TOO_LARGE',
    );
  });
});

describe('line splitter bound', () => {
  it('drops the bytes of an overlong line, keeps its byte range, and splits the next lines as before', () => {
    const splitter = createLineSplitter({ maxLineBytes: 8 });
    const lines = [
      ...splitter.push('stdout', Buffer.from('short\n0123456')),
      ...splitter.push('stdout', Buffer.from('789abcdef')),
      ...splitter.push('stdout', Buffer.from('ghij\nok\r\nnever-ending-tail')),
      ...splitter.flush('stdout'),
    ];
    expect(lines).toEqual([
      { stream: 'stdout', text: 'short', from: 0, to: 6 },
      { stream: 'stdout', text: '', from: 6, to: 27, overlong: true },
      { stream: 'stdout', text: 'ok', from: 27, to: 31 },
      { stream: 'stdout', text: '', from: 31, to: 48, overlong: true },
    ]);
  });
});
