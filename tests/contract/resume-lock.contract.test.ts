/**
 * One resume of a run at a time, on every engine: while a resume holds the run's session lock (here the test holds
 * it, as a running resume in another process would), a second `agent-harness resume` is refused with
 * ENGINE_SESSION_BUSY and makes no attempt; once the lock is given back, the resume runs. Fake engines replay
 * recorded streams (no engine process).
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { takeSessionLock } from '../../src/core/session-lock.js';
import { isAgentHarnessError } from '../../src/errors/index.js';
import { type CliSandbox, createCliSandbox, installFakeEngine, REPO, runCliProcess } from '../helpers/cli.js';

const STREAMS = path.join(REPO, 'fixtures', 'streams');
const ENGINES = [
  ['claude', 'recorded-turn1'],
  ['gemini', 'turn1'],
  ['opencode', 'turn1'],
  ['codex', 'turn1'],
] as const;

let sandbox: CliSandbox;
beforeAll(() => {
  sandbox = createCliSandbox();
});
afterAll(() => sandbox?.cleanup());

function summaryValue(stderr: string, label: string): string {
  const line = stderr.split('\n').find((l) => l.startsWith(`${label}: `));
  if (!line) throw new Error(`no "${label}" in: ${stderr}`);
  return line.slice(label.length + 2);
}

describe('resume holds its run', () => {
  it.for(ENGINES)('%s: a second resume while one runs is ENGINE_SESSION_BUSY, no attempt made', ([engine, stream]) => {
    installFakeEngine(sandbox, engine, { stdoutFile: path.join(STREAMS, engine, `${stream}.stdout.jsonl`) });
    const start = runCliProcess(sandbox, ['start', '--prompt', 'first', engine]);
    expect(start.status, start.stderr).toBe(0);
    const handle = summaryValue(start.stderr, 'Run handle');
    const runDir = summaryValue(start.stderr, 'Run directory');
    const release = takeSessionLock({ run_dir: runDir, handle });
    try {
      // The same lock is refused in this process too.
      expect(
        isAgentHarnessError(
          thrown(() => takeSessionLock({ run_dir: runDir, handle })),
          'ENGINE_SESSION_BUSY',
        ),
      ).toBe(true);
      const busy = runCliProcess(sandbox, ['resume', handle, 'second']);
      expect(busy.status).not.toBe(0);
      expect(busy.stderr).toContain('agent-harness: error ENGINE_SESSION_BUSY: ');
      expect(busy.stderr).toContain(handle);
      expect(busy.stderr).not.toContain('complete. exitCode');
      expect(fs.existsSync(path.join(runDir, '.audit', 'meta.2.json'))).toBe(false);
    } finally {
      release();
    }
    const resumed = runCliProcess(sandbox, ['resume', handle, 'second']);
    expect(resumed.status, resumed.stderr).toBe(0);
    expect(summaryValue(resumed.stderr, 'Attempt')).toBe('2');
    // Given back when the attempt ended: the next resume can take it.
    takeSessionLock({ run_dir: runDir, handle })();
  });
});

function thrown(fn: () => unknown): unknown {
  try {
    fn();
  } catch (error) {
    return error;
  }
  return null;
}
