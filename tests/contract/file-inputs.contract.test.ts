/**
 * Every file input is checked before it is opened (issue 42): a FIFO, a device or a directory is
 * INPUT_NOT_REGULAR_FILE at once, never waited on. Cassettes have their own test (cassette-inputs); this one covers
 * `report --baseline`, a fluent recording, the ACP client log read by translate, claude's state file in the engine's
 * home and a package manifest in the managed prefix (both of which the agent can write), and the HTML report's history. The CLI case runs the real `bin/agent-harness.js` with a kill timeout,
 * so a regression fails instead of hanging the suite; no timing is asserted.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { promptLineOf } from '../../src/engines/acp/translation.js';
import { isClaudeTrusted } from '../../src/engines/claude/config.js';
import { isAgentHarnessError } from '../../src/errors/index.js';
import { readRecording } from '../../src/fluent/recording.js';
import { latestHistoryReport } from '../../src/report/html-history.js';
import { BIN, createCliSandbox, REPO, type CliSandbox } from '../helpers/cli.js';
import { scaled } from '../helpers/load-scaled.js';

let sandbox: CliSandbox;
let fifo: string;
let dir: string;
/** A FIFO, a device and a directory: each must be refused. */
let irregular: string[];

beforeAll(() => {
  sandbox = createCliSandbox();
  fifo = path.join(sandbox.root, 'input.fifo');
  execFileSync('mkfifo', [fifo]);
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ah-input-dir-'));
  irregular = [fifo, '/dev/null', dir];
});
afterAll(() => {
  sandbox.cleanup();
  fs.rmSync(dir, { recursive: true, force: true });
});

/** The error `work` ends with (null when it does not fail). */
async function failure(work: () => unknown): Promise<unknown> {
  try {
    await work();
    return null;
  } catch (error) {
    return error;
  }
}

describe('agent-harness report --baseline', () => {
  it('refuses a FIFO, a device or a directory with INPUT_NOT_REGULAR_FILE', () => {
    for (const file of irregular) {
      const result = spawnSync(process.execPath, [BIN, 'report', '--baseline', file, '--out', 'out'], {
        cwd: sandbox.root,
        env: sandbox.env,
        encoding: 'utf8',
        timeout: scaled(60_000),
        killSignal: 'SIGKILL',
      });
      expect(result.stderr, file).toContain('error INPUT_NOT_REGULAR_FILE:');
      expect(result.status, result.stderr).toBe(1);
    }
  });
});

describe('files the agent can plant in the managed prefix', () => {
  it('a FIFO as a package.json above the engine executable does not hold the next start', () => {
    // A shell script, not Node: Node itself would look for the package.json above the script and wait on the FIFO.
    const stream = path.join(sandbox.prefix, 'turn1.stdout.jsonl');
    fs.copyFileSync(path.join(REPO, 'fixtures', 'streams', 'codex', 'turn1.stdout.jsonl'), stream);
    fs.writeFileSync(path.join(sandbox.prefix, 'bin', 'codex'), `#!/bin/sh\ncat '${stream}'\n`, { mode: 0o755 });
    const planted = path.join(sandbox.prefix, 'package.json');
    execFileSync('mkfifo', [planted]);
    try {
      const result = spawnSync(process.execPath, [BIN, 'start', '--prompt', 'hi', 'codex'], {
        cwd: sandbox.root,
        env: sandbox.env,
        encoding: 'utf8',
        timeout: scaled(60_000),
        killSignal: 'SIGKILL',
      });
      expect(result.signal, result.stderr).toBeNull();
      expect(result.status, result.stderr).toBe(0);
    } finally {
      fs.rmSync(planted);
    }
  });
});

describe('library inputs', () => {
  it('readRecording refuses a FIFO, a device or a directory; a missing file stays FLUENT_RECORDING_INVALID', async () => {
    for (const file of irregular)
      expect(isAgentHarnessError(await failure(() => readRecording(file)), 'INPUT_NOT_REGULAR_FILE'), file).toBe(true);
    const missing = await failure(() => readRecording(path.join(dir, 'absent.json')));
    expect(isAgentHarnessError(missing, 'FLUENT_RECORDING_INVALID')).toBe(true);
  });

  it("translate's ACP client log: a FIFO is refused, a missing log says nothing", async () => {
    expect(isAgentHarnessError(await failure(() => promptLineOf(fifo)), 'INPUT_NOT_REGULAR_FILE')).toBe(true);
    expect(promptLineOf(path.join(dir, 'absent.jsonl'))).toBeNull();
  });

  it('the HTML report history: a FIFO as a kept consistency.json is skipped like a damaged one', () => {
    const reports = fs.mkdtempSync(path.join(os.tmpdir(), 'ah-history-'));
    try {
      const kept = path.join(reports, 'history', '20260101T000000Z');
      fs.mkdirSync(kept, { recursive: true });
      execFileSync('mkfifo', [path.join(kept, 'consistency.json')]);
      expect(latestHistoryReport(reports)).toBeNull();
    } finally {
      fs.rmSync(reports, { recursive: true, force: true });
    }
  });

  it("claude's state file in the engine home: a FIFO is refused, a missing one is empty", async () => {
    expect(isAgentHarnessError(await failure(() => isClaudeTrusted(fifo, dir)), 'INPUT_NOT_REGULAR_FILE')).toBe(true);
    expect(await isClaudeTrusted(path.join(dir, 'absent.json'), dir)).toBe(false);
  });
});
