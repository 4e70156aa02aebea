/**
 * `agent-harness demo`, as the README's quick start runs it, and the step its summary suggests next: the resume it
 * prints continues the demo's session against the same embedded script (a new user's first two commands).
 */
import { describe, expect, it } from 'vitest';
import { createCliSandbox, runCliProcess } from '../helpers/cli.js';
import { engineMissingReason } from '../helpers/engines.js';

const missing = await engineMissingReason('codex');

describe.skipIf(missing !== null)('agent-harness demo', () => {
  it('completes, and the resume it suggests completes in the same run', () => {
    const sandbox = createCliSandbox();
    try {
      const demo = runCliProcess(sandbox, ['demo']);
      expect(demo.status, demo.stderr).toBe(0);
      expect(demo.stderr).toContain('Demo: conversation completed; hello.txt exists');
      const hint = /To continue this session, run: agent-harness resume (\S+) <message>/.exec(demo.stderr);
      expect(hint, demo.stderr).not.toBeNull();
      const resume = runCliProcess(sandbox, ['resume', '--translate', '3', hint![1]!, 'What did you do?']);
      expect(resume.status, resume.stderr).toBe(0);
      expect(resume.stderr).toContain('Attempt: 2');
      expect(resume.stderr).toContain('Completion: completed (done_marker)');
      expect(`${resume.stdout}${resume.stderr}`).toContain('The demo script has one more reply');
    } finally {
      sandbox.cleanup();
    }
  });
});
