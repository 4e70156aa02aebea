import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';
import { agentHarness } from './src/public/vitest.js';
import { applyDefaultTestEngines } from './tests/setup/test-engines.js';
import { projects } from './vitest.workspace.js';

// This repository's own tests run through the agentHarness plugin, like a user's would: engine tests get the
// fixtures' config by `inject`, and the reporter writes reports/agent-harness/ (consistency.json/.md, junit.xml).
// The examples import the package by name (`agent-harness/orchestrator`…), as a user's code would; here those
// names are this checkout's sources, so the tests that load examples need no build (tsconfig `paths` does the same
// for tsc and tsx).
// `npm test` runs the engine tests on codex and claude unless AGENT_HARNESS_ENGINES says otherwise (`all`: every
// engine, as CI runs them): tests/setup/test-engines.ts says why. Set here, before the plugin reads it and the workers
// inherit it. The global setup says which on stderr, where it cannot mix into a reporter's output on stdout.
applyDefaultTestEngines(process.env);

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
    globalSetup: ['tests/setup/build-dist.ts', 'tests/setup/test-engines.ts'],
  },
});
