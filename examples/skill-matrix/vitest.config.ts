import { defineConfig } from 'vitest/config';
import { agentHarness } from 'agent-harness/vitest';

export default defineConfig({
  plugins: [
    agentHarness({ engines: ['codex', 'claude', 'gemini', 'opencode'], skillRoots: ['skills'], reportDir: 'reports' }),
  ],
  test: {
    include: ['tests/**/*.test.ts'],
    testTimeout: 180_000,
  },
});
