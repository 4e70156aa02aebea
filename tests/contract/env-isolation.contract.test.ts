import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { isAgentHarnessError } from '../../src/errors/index.js';
import { thrownBy } from '../helpers/errors.js';
import { buildEngineEnv, redactEnv } from '../../src/runtime/env.js';
import { assertNoEnvLeak, findEnvLeak } from '../../src/runtime/leak-guard.js';
import { resolveHarnessPaths } from '../../src/runtime/paths.js';
import { resolveExecutable } from '../../src/runtime/executables.js';

let dir: string;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ah-env-'));
});
afterEach(() => {
  fs.rmSync(dir, { recursive: true, force: true });
});

describe('paths from the environment (seed 001 deploy semantics)', () => {
  it('defaults under <project>/.agent-harness (a name no user folder has) with the run root at .agent-harness/harness_runs', () => {
    const paths = resolveHarnessPaths({ env: {}, projectRoot: dir });
    expect(paths.dataDir).toBe(path.join(dir, '.agent-harness'));
    expect(paths.runRoot).toBe(path.join(dir, '.agent-harness', 'harness_runs'));
    expect(paths.skillRoots).toEqual([path.join(dir, 'skills'), path.join(dir, 'tests', 'fixtures', 'skills')]);
    expect(paths.codexProfile).toBe('agent-harness');
    expect(path.relative(paths.agentHome, paths.tmpDir).startsWith('..')).toBe(true);
  });

  it('honours SKILL_RUNNER_* / NPM_CONFIG_PREFIX / UV_* and AGENT_HARNESS_RUN_ROOT', () => {
    const env = {
      SKILL_RUNNER_DATA_DIR: '/srv/data',
      SKILL_RUNNER_AGENT_CACHE_DIR: '/srv/cache',
      SKILL_RUNNER_AGENT_HOME: '/srv/home',
      NPM_CONFIG_PREFIX: '/srv/npm-fallback',
      UV_CACHE_DIR: '/srv/uv',
      UV_PROJECT_ENVIRONMENT: '/srv/venv',
      AGENT_HARNESS_RUN_ROOT: 'relative/runs',
    };
    const paths = resolveHarnessPaths({ env, projectRoot: dir });
    expect(paths).toMatchObject({
      dataDir: '/srv/data',
      agentCacheDir: '/srv/cache',
      agentHome: '/srv/home',
      npmPrefix: '/srv/npm-fallback',
      uvCacheDir: '/srv/uv',
      uvProjectEnvironment: '/srv/venv',
      runRoot: path.join(dir, 'relative/runs'),
    });
    expect(
      resolveHarnessPaths({ env: { ...env, SKILL_RUNNER_NPM_PREFIX: '/srv/npm' }, projectRoot: dir }).npmPrefix,
    ).toBe('/srv/npm');
    expect(resolveHarnessPaths({ env: { SKILL_RUNNER_DATA_DIR: '/srv/data' }, projectRoot: dir }).runRoot).toBe(
      '/srv/data/harness_runs',
    );
  });
});

describe('engine env', () => {
  const hostEnv = {
    PATH: '/usr/bin:/bin',
    HOME: '/home/someone',
    LANG: 'C.UTF-8',
    OPENAI_API_KEY: 'sk-real-secret',
    AWS_SECRET_ACCESS_KEY: 'aws',
    XDG_CONFIG_HOME: '/home/someone/.config',
    SOME_RANDOM_VAR: 'x',
  };

  it('lets only the allowlist in, manages HOME/XDG/TMPDIR and routes proxies to the model server', () => {
    const paths = resolveHarnessPaths({ env: {}, projectRoot: dir });
    const env = buildEngineEnv({
      paths,
      hostEnv,
      modelMode: 'scripted',
      modelBaseUrl: 'http://127.0.0.1:4000',
      liveEnvKeys: ['OPENAI_API_KEY'],
      engineEnv: { CODEX_HOME: '/x/.codex' },
    });
    expect(env.HOME).toBe(paths.agentHome);
    expect(env.XDG_CONFIG_HOME).toBe(path.join(paths.agentHome, '.config'));
    expect(env.TMPDIR).toBe(paths.tmpDir);
    expect(env.LANG).toBe('C.UTF-8');
    expect(env.CODEX_HOME).toBe('/x/.codex');
    expect(env.PATH?.split(':')[0]).toBe(path.join(paths.npmPrefix, 'bin'));
    expect(env.HTTPS_PROXY).toBe('http://127.0.0.1:4000');
    expect(env.NO_PROXY).toContain('127.0.0.1');
    for (const leaked of ['OPENAI_API_KEY', 'AWS_SECRET_ACCESS_KEY', 'SOME_RANDOM_VAR'])
      expect(env).not.toHaveProperty(leaked);
    expect(Object.values(env).join('\n')).not.toContain('/home/someone');
  });

  it('passes vendor keys only in live mode, without proxies', () => {
    const paths = resolveHarnessPaths({ env: {}, projectRoot: dir });
    const env = buildEngineEnv({
      paths,
      hostEnv,
      modelMode: 'live',
      modelBaseUrl: null,
      liveEnvKeys: ['OPENAI_API_KEY'],
      engineEnv: {},
    });
    expect(env.OPENAI_API_KEY).toBe('sk-real-secret');
    expect(env).not.toHaveProperty('HTTPS_PROXY');
    expect(redactEnv(env).OPENAI_API_KEY).toBe('[redacted]');
    expect(redactEnv(env).HOME).toBe(paths.agentHome);
  });
});

describe('leak guard', () => {
  it('flags the host HOME, its dot directories and its ancestors, not a checkout under HOME', () => {
    const home = path.join(dir, 'home');
    fs.mkdirSync(path.join(home, '.codex'), { recursive: true });
    expect(findEnvLeak([home], home)?.reason).toContain('host HOME');
    expect(findEnvLeak([path.join(home, '.codex')], home)?.reason).toContain('.codex');
    expect(findEnvLeak([path.join(home, '.config', 'x')], home)).not.toBeNull();
    expect(findEnvLeak([dir], home)?.reason).toContain('contains');
    expect(findEnvLeak([path.join(home, 'src', 'project', 'data', 'agent_home')], home)).toBeNull();
    expect(findEnvLeak([path.join(dir, 'elsewhere')], home)).toBeNull();
    fs.symlinkSync(path.join(home, '.codex'), path.join(dir, 'sneaky'));
    expect(findEnvLeak([path.join(dir, 'sneaky', 'sub')], home)).not.toBeNull();
    const error = thrownBy(() => assertNoEnvLeak([path.join(home, '.codex')], home));
    expect(isAgentHarnessError(error, 'ENV_LEAK_DETECTED')).toBe(true);
  });
});

describe('executable resolution', () => {
  it('prefers the managed prefix, then node_modules/.bin, then PATH; lists every path searched when missing', () => {
    const paths = resolveHarnessPaths({ env: {}, projectRoot: dir });
    const pathDir = path.join(dir, 'on-path');
    fs.mkdirSync(pathDir, { recursive: true });
    fs.writeFileSync(path.join(pathDir, 'fake-engine'), '#!/bin/sh\n', { mode: 0o755 });
    expect(resolveExecutable('fake-engine', paths, pathDir)).toBe(path.join(pathDir, 'fake-engine'));
    fs.mkdirSync(path.join(paths.npmPrefix, 'bin'), { recursive: true });
    fs.writeFileSync(path.join(paths.npmPrefix, 'bin', 'fake-engine'), '#!/bin/sh\n', { mode: 0o755 });
    expect(resolveExecutable('fake-engine', paths, pathDir)).toBe(path.join(paths.npmPrefix, 'bin', 'fake-engine'));
    const error = thrownBy(() => resolveExecutable('no-such-engine', paths, pathDir));
    expect(isAgentHarnessError(error, 'ENGINE_EXECUTABLE_MISSING')).toBe(true);
    expect((error as Error).message).toContain(path.join(pathDir, 'no-such-engine'));
    expect((error as Error).message).toContain(path.join(dir, 'node_modules', '.bin', 'no-such-engine'));
  });

  it('searches AGENT_HARNESS_ENGINE_PREFIX (another release of an engine) before every other place, never where agents write', () => {
    const prefix = path.join(dir, 'latest-engines');
    const paths = resolveHarnessPaths({ env: { AGENT_HARNESS_ENGINE_PREFIX: prefix }, projectRoot: dir });
    expect(paths.enginePrefix).toBe(prefix);
    expect(resolveHarnessPaths({ env: {}, projectRoot: dir }).enginePrefix).toBeUndefined();
    fs.mkdirSync(path.join(paths.npmPrefix, 'bin'), { recursive: true });
    fs.writeFileSync(path.join(paths.npmPrefix, 'bin', 'fake-engine'), '#!/bin/sh\n', { mode: 0o755 });
    fs.mkdirSync(path.join(prefix, 'node_modules', '.bin'), { recursive: true });
    fs.writeFileSync(path.join(prefix, 'node_modules', '.bin', 'fake-engine'), '#!/bin/sh\n', { mode: 0o755 });
    expect(resolveExecutable('fake-engine', paths, '')).toBe(path.join(prefix, 'node_modules', '.bin', 'fake-engine'));
    // A prefix where agents write (under the run root) is skipped like any other agent-written executable.
    const hostile = path.join(paths.runRoot, 'prefix');
    fs.mkdirSync(path.join(hostile, 'node_modules', '.bin'), { recursive: true });
    fs.writeFileSync(path.join(hostile, 'node_modules', '.bin', 'fake-engine'), '#!/bin/sh\n', { mode: 0o755 });
    const underRuns = resolveHarnessPaths({ env: { AGENT_HARNESS_ENGINE_PREFIX: hostile }, projectRoot: dir });
    expect(resolveExecutable('fake-engine', underRuns, '')).toBe(path.join(paths.npmPrefix, 'bin', 'fake-engine'));
  });
});
