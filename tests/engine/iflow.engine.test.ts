/**
 * The real iFlow CLI against the scripted model, when an `iflow` executable can be found (managed prefix,
 * node_modules/.bin, PATH). The npm registry reachable here does not serve it, so on this machine the test
 * reports a skip naming the reason instead of pretending.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runAttempt } from '../../src/core/run-attempt.js';
import { isAgentHarnessError } from '../../src/errors/index.js';
import { startModelServer, turns } from '../../src/model/index.js';
import { resolveExecutable } from '../../src/runtime/executables.js';
import { resolveHarnessPaths } from '../../src/runtime/paths.js';
import { expectCompleteAudit } from '../helpers/audit.js';

const REPO = path.resolve(import.meta.dirname, '..', '..');
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'ah-iflow-engine-'));
const paths = resolveHarnessPaths({ env: {}, projectRoot: tmp, skillRoots: [path.join(REPO, 'fixtures', 'skills')] });
const missing = (() => {
  try {
    resolveExecutable('iflow', paths);
    return null;
  } catch (error) {
    return isAgentHarnessError(error, 'ENGINE_EXECUTABLE_MISSING') ? error.message.split('\n')[0] : String(error);
  }
})();

afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

describe('iflow engine (real binary, scripted model)', () => {
  it.skipIf(missing !== null)(`starts, runs a shell tool call and completes${missing ? ` — skipped: ${missing} (not served by the npm registry here)` : ''}`, async () => {
    const server = await startModelServer({ script: { version: 1, turns: [turns.shell("printf 'hi\\n' > hello.txt"), turns.final('Wrote hello.txt.')] } });
    try {
      const result = await runAttempt({ paths, engine: 'iflow', launch: 'start', prompt: 'Use the demo-hello skill.', modelServer: server });
      expect(result.error).toBeNull();
      expect(result.completion.state).toBe('completed');
      expect(result.fsDiff?.created).toContain('hello.txt');
      expect(result.sessionId).not.toBeNull();
      expectCompleteAudit(result.audit);
      expect(JSON.stringify(server.requests.map((r) => r.body))).toContain('demo-hello');
      expect(server.egress).toEqual([]);
    } finally {
      await server.close();
    }
  });
});
