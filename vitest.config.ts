import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';
import { agentHarness } from './src/public/vitest.js';
import { projects } from './vitest.workspace.js';

// This repository's own tests run through the agentHarness plugin, like a user's would: engine tests get the
// fixtures' config by `inject`, and the reporter writes reports/agent-harness/ (consistency.json/.md, junit.xml).
// The examples import the package by name (`agent-harness/orchestrator`…), as a user's code would; here those
// names are this checkout's sources, so the tests that load examples need no build (tsconfig `paths` does the same
// for tsc and tsx).
const publicEntry = (name: string): string => fileURLToPath(new URL(`./src/public/${name}.ts`, import.meta.url));

export default defineConfig({
  resolve: {
    alias: [
      { find: /^agent-harness\/(vitest|reporter|orchestrator|fluent|providers)$/, replacement: publicEntry('$1') },
      { find: /^agent-harness$/, replacement: publicEntry('index') },
    ],
  },
  plugins: [agentHarness({ skillRoots: ['fixtures/skills'], reportDir: 'reports/agent-harness' })],
  test: {
    projects,
    globalSetup: ['tests/setup/build-dist.ts'],
  },
});
