import { defineConfig } from 'vitest/config';
import { agentHarness } from 'agent-harness/vitest';

export default defineConfig({
  plugins: [
    agentHarness({
      engines: ['codex', 'claude'],
      skillRoots: ['skills'],
      reportDir: 'reports',
      // Every case × engine's with-skill arm must pass at least half the time, with 95% confidence; a case below it
      // fails the run, named in the output and in consistency.md.
      gates: { passRate: { atLeast: 0.5, confidence: 0.95 }, k: [1, 3] },
    }),
  ],
  test: { include: ['tests/**/*.test.ts'], testTimeout: 600_000 },
});
