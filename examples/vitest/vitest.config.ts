/**
 * Example: a Vitest config with the agentHarness() plugin, running agent-matrix.example.test.ts on real engines
 * against the scripted model. In a project of yours, `agent-harness` is a dev dependency; in this repository the
 * package refers to itself (its `exports`, i.e. dist/), so build it first:
 *
 *   npm run build && npx vitest run --config examples/vitest/vitest.config.ts
 */
import path from 'node:path';
import { defineConfig } from 'vitest/config';
import { agentHarness } from 'agent-harness/vitest';

export default defineConfig({
  root: path.resolve(import.meta.dirname, '..', '..'),
  plugins: [
    agentHarness({ engines: ['codex'], skillRoots: ['fixtures/skills'], reportDir: 'reports/agent-harness-example' }),
  ],
  test: {
    include: ['examples/vitest/**/*.example.test.ts'],
    testTimeout: 180_000,
  },
});
