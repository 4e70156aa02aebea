/**
 * SIGTERM ends a CLI that is stuck mid-attempt (issue 42): a recording whose upstream accepted the model call and
 * never answers, with an engine that waits for that answer and ignores SIGTERM. The CLI exits 143, the attempt is
 * sealed, and the upstream call is dropped. The waits are conditions with a timeout; no timing is asserted.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN, createCliSandbox, type CliSandbox } from '../helpers/cli.js';
import { eventually } from '../helpers/processes.js';

let sandbox: CliSandbox;
let upstream: net.Server;
let port = 0;
let connected = 0;
let closed = 0;

/** A codex stand-in that asks the harness's model server once, waits for the answer, and ignores SIGTERM. */
const FAKE_CODEX = `#!/usr/bin/env node
process.on('SIGTERM', () => {});
const base = process.argv.map((a) => /base_url=(\\S+)/.exec(a)).find(Boolean)[1].replace(/^"|"$/g, '');
process.stdout.write(JSON.stringify({ type: 'thread.started', thread_id: '01a2053b-9f5a-7bc0-b066-eb965712ebee' }) + '\\n');
fetch(base + '/responses', {
  method: 'POST',
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify({ model: 'gpt-test', stream: true, input: [{ role: 'user', content: [{ type: 'input_text', text: 'hi' }] }] }),
}).then((r) => r.text(), () => '');
setInterval(() => {}, 1000);
`;

beforeAll(async () => {
  sandbox = createCliSandbox();
  fs.writeFileSync(path.join(sandbox.prefix, 'bin', 'codex'), FAKE_CODEX, { mode: 0o755 });
  // Accepts the forwarded call, reads it, and never answers.
  upstream = net.createServer((socket) => {
    connected += 1;
    socket.on('data', () => undefined);
    socket.on('error', () => undefined);
    socket.on('close', () => {
      closed += 1;
    });
  });
  await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
  port = (upstream.address() as net.AddressInfo).port;
});
afterAll(async () => {
  await new Promise((resolve) => upstream.close(resolve));
  sandbox.cleanup();
});

describe('agent-harness start --model record, stuck on a silent upstream', () => {
  it('SIGTERM: exits 143, seals the attempt, and drops the upstream call', async () => {
    const cassette = path.join(sandbox.root, 'silent.cassette.json');
    const child = spawn(
      process.execPath,
      [
        BIN,
        'start',
        '--model',
        'record',
        '--cassette',
        cassette,
        '--upstream',
        `http://127.0.0.1:${port}`,
        '--prompt',
        'hi',
        'codex',
      ],
      {
        cwd: sandbox.root,
        env: { ...sandbox.env, OPENAI_API_KEY: 'sk-test-silent-upstream-0000' },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    child.stdout.resume();
    let status: number | null | undefined;
    child.once('exit', (code) => {
      status = code;
    });
    try {
      // Stuck: the upstream holds the model call the engine waits for.
      expect(await eventually(() => connected > 0, 60_000), stderr).toBe(true);
      child.kill('SIGTERM');
      expect(await eventually(() => status !== undefined, 60_000), stderr).toBe(true);
      expect(status, stderr).toBe(143);
      expect(stderr).toContain('interrupted by SIGTERM');
      expect(await eventually(() => closed === connected, 30_000)).toBe(true);
    } finally {
      child.kill('SIGKILL');
    }
  });
});
