/**
 * The two test projects. Vitest 4 never reads this file on its own: `vitest.config.ts` imports `projects`
 * into `test.projects` (see shared/research/vitest.md §2).
 *
 * - engine: real engine CLIs against the scripted model (slow, processes, files).
 * - contract: CLI/protocol/store/model contracts; never starts an engine CLI.
 */
import type { TestProjectInlineConfiguration } from 'vitest/config';

/** The `engine` and `contract` projects. */
export const projects = [
  {
    extends: true,
    test: {
      name: 'engine',
      include: ['tests/engine/**/*.engine.test.ts'],
      testTimeout: 180_000,
      hookTimeout: 60_000,
      pool: 'forks',
      maxWorkers: 2,
      sequence: { groupOrder: 2 },
    },
  },
  {
    extends: true,
    test: {
      name: 'contract',
      include: ['tests/contract/**/*.contract.test.ts', 'src/**/*.contract.test.ts'],
      testTimeout: 60_000,
      hookTimeout: 30_000,
      pool: 'forks',
      maxWorkers: 2,
      sequence: { groupOrder: 1 },
    },
  },
] satisfies TestProjectInlineConfiguration[];
