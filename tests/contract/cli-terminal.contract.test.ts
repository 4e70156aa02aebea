/**
 * The CLI on a real terminal and as a long-running server: live passthrough (view 0 with all three streams
 * on a TTY runs the engine under util-linux `script`), and `model serve`.
 */
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { attemptAuditPaths } from '../../src/core/audit-files.js';
import { expectCompleteAudit } from '../helpers/audit.js';
import { BIN, createCliSandbox, fakeEngineCalls, installFakeEngine, REPO, type CliSandbox } from '../helpers/cli.js';
import { scaled } from '../helpers/load-scaled.js';

const STREAM = path.join(REPO, 'fixtures', 'streams', 'codex', 'done-marker.stdout.jsonl');
let sandbox: CliSandbox;
beforeAll(() => {
  sandbox = createCliSandbox();
  installFakeEngine(sandbox, 'codex', { stdoutFile: STREAM });
});
afterAll(() => sandbox.cleanup());

describe('live passthrough on a terminal', () => {
  it('runs the engine under script, records pty-output/pty-timing, and still parses the session', () => {
    // `script` gives the CLI a pseudo-terminal on stdin, stdout and stderr.
    const command = [process.execPath, BIN, 'start', '--prompt', 'on a tty', 'codex'].map((a) => `'${a}'`).join(' ');
    const outer = path.join(sandbox.root, 'outer.log');
    const result = spawnSync('script', ['-q', '-e', '--log-out', outer, '-c', command], {
      cwd: sandbox.root,
      env: sandbox.env,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
      timeout: scaled(120_000),
    });
    expect(result.status).toBe(0);
    const transcript = fs.readFileSync(outer, 'utf8');
    expect(transcript).toContain('runtime begin');
    const runDir = /Run directory: (\S+)/.exec(transcript)?.[1];
    expect(runDir).toBeDefined();
    const meta = expectCompleteAudit(attemptAuditPaths(runDir!, 1), 'pty');
    expect(meta.command.io).toBe('passthrough');
    expect(meta.session_id).toBe('01a2053b-9f5a-7bc0-b066-eb965712ebee');
    expect(meta.completion?.state).toBe('completed');
    expect(fs.readFileSync(path.join(runDir!, '.audit', 'pty-output.1.log'), 'utf8')).toContain('"thread.started"');
    expect(fakeEngineCalls(sandbox).at(-1)?.argv.at(-1)).toBe('on a tty');
  });
});

describe('agent-harness model serve', () => {
  it('listens on 127.0.0.1, answers the script, lists requests, and stops on SIGTERM', async () => {
    const scriptFile = path.join(sandbox.root, 'script.json');
    fs.writeFileSync(scriptFile, JSON.stringify({ version: 1, turns: [{ type: 'text', text: 'served' }] }));
    const child = spawn(process.execPath, [BIN, 'model', 'serve', '--script', scriptFile], {
      cwd: sandbox.root,
      env: sandbox.env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    try {
      const url = await new Promise<string>((resolve, reject) => {
        let out = '';
        const timer = setTimeout(() => reject(new Error(`no listening line: ${out}`)), scaled(60_000));
        child.stdout.on('data', (chunk: Buffer) => {
          out += chunk.toString();
          const match = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(out);
          if (match) {
            clearTimeout(timer);
            resolve(match[1]!);
          }
        });
        child.once('exit', () => reject(new Error(`exited early: ${out}`)));
      });
      const response = await fetch(`${url}/v1/responses`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ stream: false, input: [] }),
      });
      expect(
        ((await response.json()) as { output: Array<{ content: Array<{ text: string }> }> }).output[0]!.content[0]!
          .text,
      ).toBe('served');
      const requests = (await (await fetch(`${url}/__harness/requests`)).json()) as unknown[];
      expect(requests).toHaveLength(1);
    } finally {
      const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
      child.kill('SIGTERM');
      expect(await exited).toBe(0);
    }
  });
});
