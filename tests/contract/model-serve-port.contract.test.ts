/**
 * `model serve --port 0` takes any free port and names it, as `view --port 0` does (docs/cli.md): the listening line
 * on stdout carries the port chosen, and the server answers there. A port out of range is USAGE_ERROR.
 */
import { spawn } from 'node:child_process';
import { afterAll, describe, expect, it } from 'vitest';
import { BIN, createCliSandbox, runCliProcess } from '../helpers/cli.js';
import { within } from '../helpers/load-scaled.js';

const sandbox = createCliSandbox();
afterAll(() => sandbox.cleanup());

describe('model serve --port', () => {
  it('--port 0 listens on a free port and prints it', async () => {
    const child = spawn(process.execPath, [BIN, 'model', 'serve', '--port', '0'], {
      cwd: sandbox.root,
      env: sandbox.env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stderr.on('data', (chunk: Buffer) => {
      err += chunk.toString();
    });
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    try {
      const listening = new Promise<string>((resolve, reject) => {
        child.stdout.on('data', (chunk: Buffer) => {
          out += chunk.toString();
          const match = /model server listening on (http:\/\/127\.0\.0\.1:(\d+))/.exec(out);
          if (match) resolve(match[1]!);
        });
        void exited.then((code) => reject(new Error(`exited (${code}) before listening: ${err}`)));
      });
      const url = await within(listening, 60_000, 'the listening line');
      expect(Number(new URL(url).port)).toBeGreaterThan(0);
      const requests = await fetch(`${url}/__harness/requests`);
      expect(requests.status).toBe(200);
    } finally {
      child.kill('SIGTERM');
      expect(await exited).toBe(0);
    }
  });

  it('refuses a port out of range with USAGE_ERROR, naming the value', () => {
    const run = runCliProcess(sandbox, ['model', 'serve', '--port', '70000']);
    expect(run.status).toBe(2);
    expect(run.stderr).toContain(
      'agent-harness: error USAGE_ERROR: --port takes a port number (0-65535), not "70000".',
    );
  });
});
