import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parse } from 'smol-toml';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { codexEngine } from '../../src/engines/codex/index.js';
import { isCodexTrusted } from '../../src/engines/codex/config.js';
import type { EngineAdapter } from '../../src/engines/engine.js';
import { engineIds, loadEngine, requireResume } from '../../src/engines/registry.js';
import { isAgentHarnessError } from '../../src/errors/index.js';
import { rejectionOf, thrownBy } from '../helpers/errors.js';

let dir: string;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ah-codex-config-'));
});
afterEach(() => {
  fs.rmSync(dir, { recursive: true, force: true });
});

describe('codex config injection (enforced-only, dedicated profile)', () => {
  it('interactive: writes the profile file and enforced keys, keeps foreign keys and profiles, registers and removes trust', async () => {
    const codexHome = path.join(dir, 'home', '.codex');
    fs.mkdirSync(codexHome, { recursive: true });
    fs.writeFileSync(
      path.join(codexHome, 'config.toml'),
      'model_reasoning_effort = "high"\n[projects."/other"]\ntrust_level = "trusted"\n',
    );
    fs.writeFileSync(path.join(codexHome, 'work.config.toml'), 'model = "o3"\n');
    const runDir = path.join(dir, 'run');
    const prepared = await codexEngine.prepare({
      runDir,
      agentHome: path.join(dir, 'home'),
      modelMode: 'scripted',
      modelBaseUrl: 'http://127.0.0.1:4321',
      profile: 'agent-harness',
      interactive: true,
    });
    const config = parse(fs.readFileSync(path.join(codexHome, 'config.toml'), 'utf8')) as Record<string, any>;
    expect(config.model_reasoning_effort).toBe('high');
    expect(config.analytics).toEqual({ enabled: false });
    expect(config.features.plugins).toBe(false);
    expect(config.model_providers['agent-harness']).toMatchObject({
      wire_api: 'responses',
      request_max_retries: 0,
      stream_max_retries: 0,
    });
    expect(config.projects[runDir]).toEqual({ trust_level: 'trusted' });
    expect(config.projects['/other']).toEqual({ trust_level: 'trusted' });
    const profile = parse(fs.readFileSync(path.join(codexHome, 'agent-harness.config.toml'), 'utf8'));
    expect(profile).toMatchObject({
      model_provider: 'agent-harness',
      sandbox_mode: 'workspace-write',
      approval_policy: 'never',
    });
    expect(fs.readFileSync(path.join(codexHome, 'work.config.toml'), 'utf8')).toBe('model = "o3"\n');
    expect(prepared.leadingArgs).toEqual([
      '--profile',
      'agent-harness',
      '-c',
      'model_providers.agent-harness.base_url="http://127.0.0.1:4321/v1"',
    ]);
    expect(prepared.configInjection).toEqual({
      engine: 'codex',
      config_path: path.join(codexHome, 'agent-harness.config.toml'),
      profile: 'agent-harness',
    });
    expect(prepared.env.CODEX_HOME).toBe(codexHome);
    expect(prepared.trust).toEqual({ path: runDir, config_path: path.join(codexHome, 'config.toml'), via: 'config' });
    expect(fs.readdirSync(path.join(dir, 'home', 'leases'))).toHaveLength(1);

    await prepared.cleanup();
    await prepared.cleanup();
    expect(await isCodexTrusted(path.join(codexHome, 'config.toml'), runDir)).toBe(false);
    expect(await isCodexTrusted(path.join(codexHome, 'config.toml'), '/other')).toBe(true);
    expect(fs.readdirSync(path.join(dir, 'home', 'leases'))).toEqual([]);
  });

  it("non-interactive: trusts the run dir on codex's command line; config.toml gets no entry and there is no lease", async () => {
    const codexHome = path.join(dir, 'home', '.codex');
    const runDir = path.join(dir, 'run "quoted" \\ dir.x');
    const prepared = await codexEngine.prepare({
      runDir,
      agentHome: path.join(dir, 'home'),
      modelMode: 'scripted',
      modelBaseUrl: 'http://127.0.0.1:4321',
      profile: 'agent-harness',
      interactive: false,
    });
    const config = parse(fs.readFileSync(path.join(codexHome, 'config.toml'), 'utf8')) as Record<string, any>;
    expect(config.projects).toBeUndefined();
    expect(fs.existsSync(path.join(dir, 'home', 'leases'))).toBe(false);
    expect(prepared.trust).toEqual({ path: runDir, config_path: path.join(codexHome, 'config.toml'), via: 'argv' });
    const override = prepared.leadingArgs.at(-1)!;
    expect(prepared.leadingArgs).toEqual([
      '--profile',
      'agent-harness',
      '-c',
      'model_providers.agent-harness.base_url="http://127.0.0.1:4321/v1"',
      '-c',
      override,
    ]);
    // The value is the TOML codex parses: an inline table keyed by the exact path, quotes and backslashes included.
    expect(override.startsWith('projects=')).toBe(true);
    expect(parse(`projects = ${override.slice('projects='.length)}`)).toEqual({
      projects: { [runDir]: { trust_level: 'trusted' } },
    });
    await prepared.cleanup();
  });

  it('fails with ENGINE_CONFIG_INJECTION_FAILED on a broken config.toml and rejects a hostile profile name', async () => {
    const codexHome = path.join(dir, 'home', '.codex');
    fs.mkdirSync(codexHome, { recursive: true });
    fs.writeFileSync(path.join(codexHome, 'config.toml'), 'this is = = not toml [');
    let error = await rejectionOf(
      codexEngine.prepare({
        runDir: dir,
        agentHome: path.join(dir, 'home'),
        modelMode: 'scripted',
        modelBaseUrl: null,
        profile: 'agent-harness',
        interactive: false,
      }),
    );
    expect(isAgentHarnessError(error, 'ENGINE_CONFIG_INJECTION_FAILED')).toBe(true);
    expect((error as Error).message).toContain(path.join(codexHome, 'config.toml'));
    error = await rejectionOf(
      codexEngine.prepare({
        runDir: dir,
        agentHome: path.join(dir, 'h2'),
        modelMode: 'scripted',
        modelBaseUrl: null,
        profile: '../evil',
        interactive: false,
      }),
    );
    expect(isAgentHarnessError(error, 'CONFIG_INVALID')).toBe(true);
  });

  it('builds start and resume argv as codex 0.169 expects', () => {
    expect(codexEngine.buildStartArgs({ prompt: 'hi', passthrough: [] })).toEqual([
      'exec',
      '--json',
      '--skip-git-repo-check',
      'hi',
    ]);
    expect(codexEngine.buildStartArgs({ prompt: null, passthrough: ['exec', '--json', 'x y'] })).toEqual([
      'exec',
      '--json',
      'x y',
    ]);
    expect(codexEngine.buildResumeArgs?.({ sessionId: 't-1', message: 'next' })).toEqual([
      'exec',
      'resume',
      '--json',
      '--skip-git-repo-check',
      't-1',
      'next',
    ]);
  });
});

describe('engine registry', () => {
  it('knows every engine id, rejects unknown ids, and gates missing capabilities', async () => {
    expect((await loadEngine('codex')).id).toBe('codex');
    for (const id of engineIds()) expect((await loadEngine(id)).id).toBe(id);
    const unknown = await loadEngine('cursor').then(
      () => null,
      (error: unknown) => error,
    );
    expect(isAgentHarnessError(unknown, 'ENGINE_UNKNOWN')).toBe(true);
    const noResume: EngineAdapter = { ...codexEngine, id: 'iflow' };
    delete (noResume as { buildResumeArgs?: unknown }).buildResumeArgs;
    const gated = thrownBy(() => requireResume(noResume));
    expect(isAgentHarnessError(gated, 'ENGINE_CAPABILITY_UNAVAILABLE')).toBe(true);
    expect((gated as Error).message).toContain('"iflow"');
    expect((gated as Error).message).toContain('resume');
    expect(requireResume(codexEngine)).toBe(codexEngine.buildResumeArgs);
  });
});
