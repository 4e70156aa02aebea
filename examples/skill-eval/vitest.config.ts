import { defineConfig } from 'vitest/config';
import { agentHarness } from 'agent-harness/vitest';

export default defineConfig({
  plugins: [
    agentHarness({
      engines: ['codex', 'claude'],
      skillRoots: ['skills'],
      reportDir: 'reports',
      // Every case × engine's with-skill arm must pass at least 30% of the time, with 95% confidence (4 of 5 trials
      // has a Wilson lower bound of 37.6%); a case below it fails the run, named in the output and in consistency.md.
      gates: { passRate: { atLeast: 0.3, confidence: 0.95 }, k: [1, 3] },
    }),
  ],
  test: { include: ['tests/**/*.test.ts'], testTimeout: 600_000 },
});
