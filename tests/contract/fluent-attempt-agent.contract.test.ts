/**
 * The fluent `attemptAgent` over a real audited attempt (a fake codex in the sandbox's managed prefix replaying a
 * recorded stream that ends with the done marker, no engine): its `finalMessage` is what the agent said, without the
 * marker, ready to be the next agent's prompt; the raw audit still holds the marker.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { attemptAuditPaths } from '../../src/core/audit-files.js';
import { attemptAgent } from '../../src/fluent/attempt-agent.js';
import { resolveHarnessPaths } from '../../src/runtime/paths.js';
import { type CliSandbox, createCliSandbox, installFakeEngine, REPO } from '../helpers/cli.js';

let sandbox: CliSandbox;
beforeAll(() => {
  sandbox = createCliSandbox();
  installFakeEngine(sandbox, 'codex', {
    stdoutFile: path.join(REPO, 'fixtures', 'streams', 'codex', 'file-change.stdout.jsonl'),
  });
});
afterAll(() => sandbox?.cleanup());

describe('attemptAgent', () => {
  it("returns the agent's final message without the done marker; the raw audit keeps it", async () => {
    const paths = resolveHarnessPaths({ env: sandbox.env, projectRoot: sandbox.root });
    const Agent = attemptAgent('codex', {
      paths,
      modelServer: { url: 'http://127.0.0.1:9', setScript: () => undefined },
      hostEnv: sandbox.env,
    });
    const result = await new Agent().execute('Write notes.');
    expect(result.completion).toBe('completed');
    expect(result.finalMessage).toBe('Notes written.');
    const raw = fs.readFileSync(attemptAuditPaths(path.join(paths.runRoot, result.runId), 1).stdout, 'utf8');
    expect(raw).toContain('__SKILL_DONE__');
  });
});
