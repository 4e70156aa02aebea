/**
 * The engine launch tests' attempt: a scripted start of `engine` in a data dir of the test file's own, with the
 * engine's native stand-in (`AGENT_HARNESS_NPM_LAUNCHERS` empty) or its npm launcher as installed (`1`), and the
 * meta it recorded. `tests/engine/*-launch.engine.test.ts` check what the engine process really ran with.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, expect } from 'vitest';
import { runAttempt } from '../../src/core/run-attempt.js';
import type { AttemptResult } from '../../src/core/attempt-result.js';
import type { ModelScript } from '../../src/model/index.js';
import { resolveHarnessPaths, type HarnessPaths } from '../../src/runtime/paths.js';

/** Harness paths under a new temp data dir, removed after the file's tests. */
export function launchTestPaths(name: string): HarnessPaths {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), `ah-${name}-`));
  afterAll(() => fs.rmSync(dataDir, { recursive: true, force: true }));
  return resolveHarnessPaths({ env: { SKILL_RUNNER_DATA_DIR: dataDir }, projectRoot: process.cwd(), skillRoots: [] });
}

/** The meta's command, as the launch tests read it. */
export interface LaunchMeta {
  command: { executable: string; argv: string[]; launcher?: string };
  engine_version: string | null;
  env: Record<string, string>;
}

/** A completed scripted start of `engine`, through its native stand-in or (`npmLaunchers`) as installed. */
export async function launchAttempt(
  paths: HarnessPaths,
  engine: string,
  script: ModelScript,
  npmLaunchers: boolean,
): Promise<{ result: AttemptResult; meta: LaunchMeta }> {
  const result = await runAttempt({
    paths,
    engine,
    launch: 'start',
    prompt: 'go',
    script,
    hostEnv: { ...process.env, AGENT_HARNESS_NPM_LAUNCHERS: npmLaunchers ? '1' : '' },
  });
  expect(result.completion.state, result.error?.message).toBe('completed');
  return { result, meta: JSON.parse(fs.readFileSync(result.audit.meta, 'utf8')) as LaunchMeta };
}
