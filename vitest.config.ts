import { defineConfig } from 'vitest/config';
import { agentHarness } from './src/public/vitest.js';
import { projects } from './vitest.workspace.js';

// This repository's own tests run through the agentHarness plugin, like a user's would: engine tests get the
// fixtures' config by `inject`, and the reporter writes reports/agent-harness/ (consistency.json/.md, junit.xml).
export default defineConfig({
  plugins: [agentHarness({ skillRoots: ['fixtures/skills'], reportDir: 'reports/agent-harness' })],
  test: {
    projects,
    globalSetup: ['tests/setup/build-dist.ts'],
  },
});
