/**
 * With the real opencode: a harness option written after the engine's name (`agent-harness start opencode --prompt
 * x`) is opencode's, which then starts its terminal UI into the pipe and would wait for keys until the timeout. The
 * harness ends it at once with ENGINE_NEEDS_TERMINAL (terminal-ui-guard.ts), saying where the option belongs; the
 * same prompt before the engine's name runs its turn headless.
 */
import { describe, expect, it } from 'vitest';
import { createCliSandbox, runCliProcess } from '../helpers/cli.js';
import { engineMissingReason } from '../helpers/engines.js';

// Skipped, saying why, where opencode cannot run or `AGENT_HARNESS_ENGINES` leaves it out.
const missing = await engineMissingReason('opencode');

describe('opencode started with its terminal UI in a pipe', () => {
  it('ends with ENGINE_NEEDS_TERMINAL naming where harness options go, not at the timeout', ({ skip }) => {
    if (missing) skip(missing);
    const sandbox = createCliSandbox();
    try {
      const run = runCliProcess(sandbox, ['start', '--timeout-ms', '600000', 'opencode', '--prompt', 'x']);
      expect(run.status, run.stderr).toBe(1);
      expect(run.stderr).toContain('Completion: failed (needs_terminal: ENGINE_NEEDS_TERMINAL, category protocol)');
      expect(run.stderr).toContain('agent-harness start --prompt "…" opencode');
      const headless = runCliProcess(sandbox, ['start', '--prompt', 'x', 'opencode']);
      expect(headless.status, headless.stderr).toBe(0);
      expect(headless.stderr).toContain('Completion: awaiting_input (turn_end_without_done_marker)');
    } finally {
      sandbox.cleanup();
    }
  });
});
