/**
 * The two test projects. Vitest 4 never reads this file on its own: `vitest.config.ts` imports `projects`
 * into `test.projects` (see shared/research/vitest.md §2).
 *
 * - engine: real engine CLIs against the scripted model (slow, processes, files).
 * - contract: CLI/protocol/store/model contracts; never starts an engine CLI.
 *
 * The default test and hook timeouts are what a quiet machine needs, scaled by the load when the run starts
 * (tests/helpers/load-scaled.ts): a timeout bounds a hung test, it never asserts speed.
 */
import type { TestProjectInlineConfiguration } from 'vitest/config';
import { scaled } from './tests/helpers/load-scaled.js';

/** The `engine` and `contract` projects. */
export const projects = [
  {
    extends: true,
    test: {
      name: 'engine',
      include: ['tests/engine/**/*.engine.test.ts'],
      testTimeout: scaled(180_000),
      hookTimeout: scaled(60_000),
      pool: 'forks',
      // Three on two cores: much of an engine test is waiting (copilot retries a 429 five times, the stall and
      // timeout cases wait for their deadline), and a third file overlaps that wait with another's work.
      maxWorkers: 3,
      sequence: { groupOrder: 2 },
    },
  },
  {
    extends: true,
    test: {
      name: 'contract',
      include: ['tests/contract/**/*.contract.test.ts', 'src/**/*.contract.test.ts'],
      testTimeout: scaled(60_000),
      hookTimeout: scaled(30_000),
      pool: 'forks',
      maxWorkers: 2,
      // One module graph per worker, not per file: re-importing the sources for each of 140 files cost about a
      // quarter of the project's CPU (400 s → 306 s measured). A contract test that changes process state (env,
      // cwd, the hash cache) puts it back in its own hooks.
      isolate: false,
      sequence: { groupOrder: 1 },
    },
  },
] satisfies TestProjectInlineConfiguration[];
