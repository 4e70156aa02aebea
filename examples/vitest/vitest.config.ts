/**
 * Example: this repository's test projects with the agentHarness() plugin (what vitest.config.ts would look
 * like after adopting it). Run: `npx vitest run --config examples/vitest/vitest.config.ts --project engine`.
 */
import path from 'node:path';
import { defineConfig } from 'vitest/config';
import { agentHarness } from '../../src/public/vitest.js';
import { projects } from '../../vitest.workspace.js';

export default defineConfig({
  root: path.resolve(import.meta.dirname, '..', '..'),
  plugins: [agentHarness({ engines: ['codex'], skillRoots: ['fixtures/skills'], reportDir: 'reports/agent-harness' })],
  test: { projects },
});
