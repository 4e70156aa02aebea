/**
 * What an agent can write is never followed, run or shared (issue 42): each run's own HOME, npm prefix and uv
 * directories; the managed prefix read-only in the mount plan; config edits that refuse an agent's links; leases that
 * name a file outside their home dropped unread; engines never taken from where agents write.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { attemptMountPlan } from '../../src/core/attempt-filesystem.js';
import { isAgentHarnessError } from '../../src/errors/index.js';
import { assertAgentPathSafe, confineToAgentRoots } from '../../src/runtime/agent-writable.js';
import { editConfigFile, JSON_CONFIG, readConfigFile } from '../../src/runtime/config-file.js';
import { buildEngineEnv } from '../../src/runtime/env.js';
import { resolveExecutable } from '../../src/runtime/executables.js';
import { reclaimDeadLeases, takeLease } from '../../src/runtime/lease.js';
import { resolveHarnessPaths, runHome } from '../../src/runtime/paths.js';
import { deadOwner } from '../helpers/processes.js';

let tmp: string;
beforeEach(() => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'ah-agent-writable-'));
});
afterEach(() => fs.rmSync(tmp, { recursive: true, force: true }));

/** A run's home under a fresh project, made, with a host directory beside it holding a config the agent wants. */
function setUp() {
  const paths = resolveHarnessPaths({ projectRoot: tmp, env: {}, skillRoots: [] });
  const home = runHome(paths, '20261129T000000-codex-0123abcd');
  fs.mkdirSync(home.home, { recursive: true });
  const host = path.join(tmp, 'host-config');
  fs.mkdirSync(host);
  fs.writeFileSync(path.join(host, 'settings.json'), '{ "secret": "host-token" }\n');
  return { paths, home, host };
}

const thrown = async (work: () => Promise<unknown>): Promise<unknown> =>
  work().then(
    () => null,
    (error) => error,
  );

describe('a run of its own', () => {
  it("is a HOME, npm prefix and uv directories under the managed home, named by the run id; the engine's env points there", () => {
    const { paths, home } = setUp();
    expect(home.home).toBe(path.join(paths.agentHome, 'runs', '20261129T000000-codex-0123abcd'));
    expect(
      [home.npmPrefix, home.uvCacheDir, home.uvProjectEnvironment].every((dir) => dir.startsWith(`${home.home}/`)),
    ).toBe(true);
    expect(() => runHome(paths, '../escape')).toThrow(/not a run id/);
    const env = buildEngineEnv({
      paths,
      runHome: home,
      hostEnv: { PATH: '/usr/bin' },
      modelMode: 'scripted',
      modelBaseUrl: null,
      liveEnvKeys: [],
      engineEnv: {},
    });
    expect(env).toMatchObject({
      HOME: home.home,
      XDG_CONFIG_HOME: path.join(home.home, '.config'),
      NPM_CONFIG_PREFIX: home.npmPrefix,
      UV_CACHE_DIR: home.uvCacheDir,
      UV_PROJECT_ENVIRONMENT: home.uvProjectEnvironment,
    });
    // The run's own bin first, then the shared prefix's (engines installed there), then the project's.
    expect(env.PATH?.split(':').slice(0, 3)).toEqual([
      path.join(home.npmPrefix, 'bin'),
      path.join(paths.npmPrefix, 'bin'),
      path.join(paths.projectRoot, 'node_modules', '.bin'),
    ]);
  });

  it("binds the run's home read-write and the managed prefix read-only; neither the managed home nor other runs' homes", () => {
    const { paths, home } = setUp();
    fs.mkdirSync(path.join(paths.npmPrefix, 'bin'), { recursive: true });
    const other = runHome(paths, '20261129T000001-claude-89abcdef').home;
    fs.mkdirSync(other, { recursive: true });
    const runDir = path.join(paths.runRoot, 'run');
    const attemptTmp = path.join(paths.tmpDir, 'run-1');
    for (const dir of [runDir, attemptTmp]) fs.mkdirSync(dir, { recursive: true });
    const plan = attemptMountPlan({
      paths,
      runDir,
      attemptTmp,
      home,
      executables: [],
      agentOptions: undefined,
      expose: [],
    });
    const access = Object.fromEntries(plan.exposed.map((entry) => [entry.path, entry.access]));
    expect(access[home.home]).toBe('rw');
    expect(access[paths.npmPrefix]).toBe('ro');
    expect(access[paths.agentHome]).toBeUndefined();
    expect(access[other]).toBeUndefined();
    expect(plan.mounts.some((mount) => mount.source === other || mount.source === paths.agentHome)).toBe(false);
  });
});

describe('config the harness edits where agents write', () => {
  it('refuses a link an agent planted on the way (a directory or the file itself); outside a confinement nothing is checked', async () => {
    const { home, host } = setUp();
    fs.symlinkSync(host, path.join(home.home, '.gemini'));
    const viaDir = path.join(home.home, '.gemini', 'settings.json');
    const refused = await thrown(() =>
      confineToAgentRoots([home.home], () =>
        editConfigFile(viaDir, JSON_CONFIG, (doc) => {
          doc.harness = true;
        }),
      ),
    );
    expect(isAgentHarnessError(refused, 'ENGINE_CONFIG_INJECTION_FAILED')).toBe(true);
    expect((refused as Error).message).toContain(`${path.join(home.home, '.gemini')} is a symbolic link`);
    expect(fs.readFileSync(path.join(host, 'settings.json'), 'utf8')).toBe('{ "secret": "host-token" }\n');

    fs.mkdirSync(path.join(home.home, '.codex'));
    fs.symlinkSync(path.join(host, 'settings.json'), path.join(home.home, '.codex', 'config.json'));
    const viaFile = await thrown(() =>
      confineToAgentRoots([home.home], () =>
        readConfigFile(path.join(home.home, '.codex', 'config.json'), JSON_CONFIG),
      ),
    );
    expect(isAgentHarnessError(viaFile, 'ENGINE_CONFIG_INJECTION_FAILED')).toBe(true);
    // The same read outside a confinement (a tool reading its own config) is not this rule's business.
    expect(await readConfigFile(path.join(home.home, '.codex', 'config.json'), JSON_CONFIG)).toEqual({
      secret: 'host-token',
    });
    // A path that is not there yet is fine up to where it stops; a root of the confinement is not judged.
    await confineToAgentRoots([home.home], async () => {
      expect(() => assertAgentPathSafe(path.join(home.home, '.claude', 'new', 'file.json'))).not.toThrow();
      expect(() => assertAgentPathSafe(path.join(tmp, 'elsewhere', 'x'))).not.toThrow();
    });
  });

  it('a lease naming a file outside its home is dropped unread; one whose way holds a link is refused', async () => {
    const { home, host } = setUp();
    const hostFile = path.join(host, 'settings.json');
    await takeLease(home.home, hostFile, 'JSON', ['secret'], await deadOwner());
    expect(await reclaimDeadLeases(home.home)).toHaveLength(1);
    expect(fs.readFileSync(hostFile, 'utf8')).toBe('{ "secret": "host-token" }\n');
    expect(fs.readdirSync(path.join(home.home, 'leases'))).toEqual([]);

    fs.symlinkSync(host, path.join(home.home, '.claude'));
    await takeLease(home.home, path.join(home.home, '.claude', 'settings.json'), 'JSON', ['secret'], await deadOwner());
    const refused = await thrown(() => reclaimDeadLeases(home.home));
    expect(isAgentHarnessError(refused, 'ENGINE_CONFIG_INJECTION_FAILED')).toBe(true);
    expect(fs.readFileSync(hostFile, 'utf8')).toBe('{ "secret": "host-token" }\n');
  });
});

describe('engines', () => {
  it('are never taken from where agents write (runs, their homes, TMPDIRs), even first on PATH', () => {
    const { paths, home } = setUp();
    const planted = path.join(home.npmPrefix, 'bin');
    fs.mkdirSync(planted, { recursive: true });
    fs.writeFileSync(path.join(planted, 'ah-fake-engine'), '#!/bin/sh\nexit 0\n', { mode: 0o755 });
    const real = path.join(tmp, 'real-bin');
    fs.mkdirSync(real);
    fs.writeFileSync(path.join(real, 'ah-fake-engine'), '#!/bin/sh\nexit 0\n', { mode: 0o755 });
    expect(resolveExecutable('ah-fake-engine', paths, `${planted}:${real}`)).toBe(path.join(real, 'ah-fake-engine'));
    const missing = (() => {
      try {
        return resolveExecutable('ah-fake-engine', paths, planted);
      } catch (error) {
        return error;
      }
    })();
    expect(isAgentHarnessError(missing, 'ENGINE_EXECUTABLE_MISSING')).toBe(true);
    expect((missing as Error).message).toContain('skipped: it lies where agents write');
  });
});
