/**
 * The CLI ends an attempt that has a session with `agent-harness resume <handle>`, and when codex's TUI printed its own
 * `codex resume <id>` (which runs outside the harness) the line says not to use that one.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { resumeHint } from '../../src/cli/resume-hint.js';
import { createCliSandbox, installFakeEngine, REPO, runCliProcess } from '../helpers/cli.js';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ah-resume-hint-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

/** A terminal log as `script` records it: codex's exit lines among cursor moves and colours. */
function terminalLog(name: string, text: string): string {
  const file = path.join(dir, name);
  fs.writeFileSync(file, text);
  return file;
}

describe('resumeHint', () => {
  const session = '019a2b3c-0000-7000-8000-000000000001';

  it("names agent-harness resume, and not codex's own command, when codex's TUI printed it", async () => {
    const ptyOutput = terminalLog(
      'codex-tui.log',
      `\u001b[2mToken usage: total=30\u001b[0m\r\nTo continue this session, run:\u001b[1;4H\u001b[36mcodex\u001b[39m resume ${session}\r\n`,
    );
    expect(await resumeHint({ engine: 'codex', handle: '3f9a01bc', sessionId: session, audit: { ptyOutput } })).toBe(
      'To continue this session, run: agent-harness resume 3f9a01bc <message> (not `codex resume` as codex printed: that runs outside the harness, in your own home and without an audit)',
    );
  });

  it('names agent-harness resume alone when the engine printed no hint of its own', async () => {
    const ptyOutput = path.join(dir, 'no-such-log');
    for (const engine of ['codex', 'claude'] as const)
      expect(await resumeHint({ engine, handle: '3f9a01bc', sessionId: session, audit: { ptyOutput } })).toBe(
        'To continue this session, run: agent-harness resume 3f9a01bc <message>',
      );
  });

  it('is absent without a session', async () => {
    expect(
      await resumeHint({ engine: 'codex', handle: '3f9a01bc', sessionId: null, audit: { ptyOutput: '' } }),
    ).toBeNull();
  });
});

describe('the CLI summary', () => {
  it('ends with the agent-harness resume line of the run', () => {
    const sandbox = createCliSandbox();
    try {
      installFakeEngine(sandbox, 'codex', {
        stdoutFile: path.join(REPO, 'fixtures', 'streams', 'codex', 'done-marker.stdout.jsonl'),
      });
      const run = runCliProcess(sandbox, ['start', '--prompt', 'hello', 'codex']);
      expect(run.status, run.stderr).toBe(0);
      const handle = /^Run handle: (\S+)$/m.exec(run.stderr)![1]!;
      expect(run.stderr.trimEnd().split('\n').at(-1)).toBe(
        `To continue this session, run: agent-harness resume ${handle} <message>`,
      );
    } finally {
      sandbox.cleanup();
    }
  });
});
