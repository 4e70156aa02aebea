/**
 * Interrupting `agent-harness start`: SIGINT exits 130 and SIGTERM 143 whatever the engine does with the
 * signal, the summary says so, and the attempt is sealed as failed (ENGINE_CANCELED); a second signal kills the
 * engine at once and still seals the audit. The fake engine prints a stream and then hangs, ignoring SIGTERM.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AttemptMetaSchema } from '../../src/protocol/index.js';
import { BIN, createCliSandbox, installFakeEngine, REPO, type CliSandbox } from '../helpers/cli.js';
import { eventually } from '../helpers/processes.js';

const STREAM = path.join(REPO, 'fixtures', 'streams', 'codex', 'done-marker.stdout.jsonl');
let sandbox: CliSandbox;

beforeAll(() => {
  sandbox = createCliSandbox();
  installFakeEngine(sandbox, 'codex', { stdoutFile: STREAM, hangAfterOutput: true });
});
afterAll(() => sandbox.cleanup());

/** How many signals the CLI has said it received (one line each on stderr). */
const acknowledged = (stderr: string): number => stderr.match(/^agent-harness: SIG(?:INT|TERM): /gm)?.length ?? 0;

/**
 * Starts the CLI on the hanging fake, waits for the engine to run, and sends `signals` one at a time: each next one
 * the moment the CLI says it received the previous one (signals sent back to back can be merged into one by the
 * kernel before the CLI runs, so a loaded machine would test a single signal; and the second must come within the
 * 2 s the first gives the engine). Waits for the exit.
 */
async function interrupt(signals: NodeJS.Signals[]): Promise<{ status: number | null; stderr: string; sent: number }> {
  const child = spawn(process.execPath, [BIN, 'start', '--prompt', 'hang', 'codex'], {
    cwd: sandbox.root,
    env: sandbox.env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  let stdout = '';
  let sent = 0;
  const sendNext = (): void => {
    if (sent < signals.length && acknowledged(stderr) === sent) child.kill(signals[sent++]!);
  };
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
    if (sent > 0) sendNext();
  });
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  try {
    // The fake ignores SIGTERM before it prints: once its output shows, it will outlive the first signal.
    expect(await eventually(() => stdout.length > 0, 60_000)).toBe(true);
    sendNext();
    return { status: await exited, stderr, sent };
  } finally {
    child.kill('SIGKILL');
  }
}

/** The meta of the attempt the CLI printed. */
function metaOf(stderr: string) {
  const runDir = /^run_dir: (.+)$/m.exec(stderr)![1]!;
  return AttemptMetaSchema.parse(JSON.parse(fs.readFileSync(path.join(runDir, '.audit', 'meta.1.json'), 'utf8')));
}

describe('agent-harness start, interrupted', () => {
  it('SIGINT: exit 130, the summary says interrupted, the attempt is sealed as failed ENGINE_CANCELED', async () => {
    const { status, stderr } = await interrupt(['SIGINT']);
    expect(status, stderr).toBe(130);
    expect(stderr).toMatch(/Start interrupted\. exitCode=130 \(SIGINT; engine exit /);
    expect(stderr).toContain('interrupted by SIGINT');
    const meta = metaOf(stderr);
    expect(meta).toMatchObject({
      status: 'finished',
      completion: { state: 'failed', code: 'ENGINE_CANCELED' },
      exit: { canceled: true },
    });
  });

  it('SIGTERM: exit 143, same sealing', async () => {
    const { status, stderr } = await interrupt(['SIGTERM']);
    expect(status, stderr).toBe(143);
    expect(stderr).toMatch(/Start interrupted\. exitCode=143 \(SIGTERM/);
    expect(metaOf(stderr)).toMatchObject({
      status: 'finished',
      completion: { state: 'failed', code: 'ENGINE_CANCELED' },
    });
  });

  it('a second SIGINT kills the engine at once and the audit is still sealed', async () => {
    const { status, stderr, sent } = await interrupt(['SIGINT', 'SIGINT']);
    expect(sent).toBe(2);
    expect(status, stderr).toBe(130);
    expect(stderr).toContain('killing the engine now; the audit is still being sealed');
    const meta = metaOf(stderr);
    expect(meta).toMatchObject({ status: 'finished', completion: { state: 'failed', code: 'ENGINE_CANCELED' } });
    expect(
      fs
        .readFileSync(
          path.join(path.dirname(path.dirname(path.join(meta.command.cwd, '.audit', 'x'))), '.audit', 'fcmp.1.jsonl'),
          'utf8',
        )
        .trim(),
    ).not.toBe('');
  });
});
