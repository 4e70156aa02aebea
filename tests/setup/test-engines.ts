/**
 * The engines this repository's own engine tests run on when `AGENT_HARNESS_ENGINES` is not set: codex and claude.
 * On all six the suite takes 13 to 16 minutes on a quiet 2-core machine, over the 10 `npm test` is held to (most of
 * an engine test is the CLI's own start-up: codex ~0.9 s of CPU, claude ~1.4, gemini ~2.3, opencode, copilot and qwen
 * 3.2 to 3.5). These two speak two of the four wire APIs and start quickest. `AGENT_HARNESS_ENGINES=all npm test` runs
 * every engine, as CI does (`.ci/run`); any list of engines narrows as it does in a user's project.
 */
import { ALL_ENGINES, ENGINES_ENV } from '../../src/vitest/options.js';

/** The engines of a test run without `AGENT_HARNESS_ENGINES`. */
export const DEFAULT_TEST_ENGINES = 'codex,claude';

/** Sets `AGENT_HARNESS_ENGINES` in `env` to {@link DEFAULT_TEST_ENGINES} when it is unset or blank (the workers inherit it). */
export function applyDefaultTestEngines(env: NodeJS.ProcessEnv): void {
  if (!env[ENGINES_ENV]?.trim()) env[ENGINES_ENV] = DEFAULT_TEST_ENGINES;
}

/** The line that says which engines the engine tests run on. */
export function testEnginesLine(env: NodeJS.ProcessEnv): string {
  const value = env[ENGINES_ENV]?.trim() || ALL_ENGINES;
  return value === ALL_ENGINES
    ? `agent-harness tests: engine tests on every engine (${ENGINES_ENV}=${ALL_ENGINES})`
    : `agent-harness tests: engine tests on ${value} (${ENGINES_ENV}=${ALL_ENGINES} runs every engine, as CI does)`;
}

/** Marks, in the main process, that the line was said (each project runs the global setup of its own). */
const SAID = Symbol.for('agent-harness.tests.engines-said');

/** Vitest's global setup hook: says the engines on stderr, once a run. */
export default function setup(): void {
  const marks = globalThis as { [SAID]?: true };
  if (marks[SAID]) return;
  marks[SAID] = true;
  process.stderr.write(`${testEnginesLine(process.env)}\n`);
}
