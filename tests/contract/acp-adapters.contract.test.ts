/**
 * The ACP commands of claude and codex (their pinned adapters), without starting them: what each command is made of,
 * and ENGINE_CAPABILITY_UNAVAILABLE naming the package when an adapter is not installed. The adapters themselves run
 * in tests/engine/providers-acp.engine.test.ts.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { adapterFile, installedPackageDir } from '../../src/engines/acp/adapter-package.js';
import { acp as claudeAcp, CLAUDE_ACP_PACKAGE } from '../../src/engines/claude/acp.js';
import { claudeEngine } from '../../src/engines/claude/index.js';
import { acp as codexAcp, CODEX_ACP_PACKAGE } from '../../src/engines/codex/acp.js';
import { codexEngine } from '../../src/engines/codex/index.js';
import type { EngineAdapter } from '../../src/engines/engine.js';
import { isAgentHarnessError } from '../../src/errors/index.js';
import { thrownBy } from '../helpers/errors.js';

let dir: string;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ah-acp-adapters-'));
});
afterEach(() => {
  fs.rmSync(dir, { recursive: true, force: true });
});

/** The engine prepared as an attempt prepares it, in this test's directory, for a scripted model on port 4321. */
async function prepareIn(engine: EngineAdapter) {
  const runDir = path.join(dir, 'run');
  const agentHome = path.join(dir, 'home');
  const prepared = await engine.prepare({
    runDir,
    agentHome,
    modelMode: 'scripted',
    modelBaseUrl: 'http://127.0.0.1:4321',
    profile: 'agent-harness',
    interactive: false,
  });
  return { runDir, agentHome, prepared };
}

const CLAUDE_INSTALLED = installedPackageDir(CLAUDE_ACP_PACKAGE) !== null;
const CODEX_INSTALLED = installedPackageDir(CODEX_ACP_PACKAGE) !== null;

describe('ACP adapters of claude and codex', () => {
  it('each engine names its adapter package and bin', () => {
    expect(claudeEngine.acp).toBe(claudeAcp);
    expect(claudeAcp.via).toEqual({ package: '@zed-industries/claude-agent-acp', bin: 'claude-agent-acp' });
    expect(codexEngine.acp).toBe(codexAcp);
    expect(codexAcp.via).toEqual({ package: '@zed-industries/codex-acp', bin: 'codex-acp' });
  });

  it('an adapter that is not installed is ENGINE_CAPABILITY_UNAVAILABLE for capability acp, naming the package', () => {
    // Seen from a directory with no node_modules above it that holds the package.
    const error = thrownBy(() => adapterFile('claude', CLAUDE_ACP_PACKAGE, 'dist/index.js', dir));
    expect(isAgentHarnessError(error, 'ENGINE_CAPABILITY_UNAVAILABLE')).toBe(true);
    expect((error as Error).message).toContain(CLAUDE_ACP_PACKAGE);
    expect((error as Error).message).toContain(`npm i -D ${CLAUDE_ACP_PACKAGE}@`);
    expect((error as { details: unknown }).details).toEqual({
      engine: 'claude',
      capability: 'acp',
      package: CLAUDE_ACP_PACKAGE,
    });
    // A package directory whose package.json names another package does not count.
    const fake = path.join(dir, 'node_modules', ...CLAUDE_ACP_PACKAGE.split('/'));
    fs.mkdirSync(fake, { recursive: true });
    fs.writeFileSync(path.join(fake, 'package.json'), JSON.stringify({ name: 'something-else' }));
    expect(installedPackageDir(CLAUDE_ACP_PACKAGE, dir)).toBeNull();
    fs.writeFileSync(path.join(fake, 'package.json'), JSON.stringify({ name: CLAUDE_ACP_PACKAGE }));
    expect(installedPackageDir(CLAUDE_ACP_PACKAGE, dir)).toBe(fs.realpathSync(fake));
    // Installed, but without the file the command needs.
    const missingFile = thrownBy(() => adapterFile('claude', CLAUDE_ACP_PACKAGE, 'dist/index.js', dir));
    expect(isAgentHarnessError(missingFile, 'ENGINE_CAPABILITY_UNAVAILABLE')).toBe(true);
    expect((missingFile as Error).message).toContain(path.join(fake, 'dist', 'index.js'));
  });

  it.skipIf(!CLAUDE_INSTALLED)(
    'claude: this Node runs the adapter script, with the pinned CLI as its Claude Code',
    async () => {
      const { runDir, agentHome, prepared } = await prepareIn(claudeEngine);
      try {
        const command = claudeAcp.command({
          executable: '/opt/claude/bin/claude',
          prepared,
          runDir,
          agentHome,
          modelBaseUrl: 'http://127.0.0.1:4321',
        });
        expect(command.file).toBe(process.execPath);
        expect(command.args).toEqual([path.join(installedPackageDir(CLAUDE_ACP_PACKAGE)!, 'dist', 'index.js')]);
        expect(command.env).toEqual({ CLAUDE_CODE_EXECUTABLE: '/opt/claude/bin/claude' });
        // The rest comes from the prepared env: the scripted model, its placeholder key, root's bypass switch.
        expect(prepared.env).toMatchObject({ ANTHROPIC_BASE_URL: 'http://127.0.0.1:4321', IS_SANDBOX: '1' });
      } finally {
        await prepared.cleanup();
      }
    },
  );

  it.skipIf(!CODEX_INSTALLED)(
    'codex: the native binary, the harness profile and prepared overrides as -c, no --profile',
    async () => {
      const { runDir, agentHome, prepared } = await prepareIn(codexEngine);
      const command = codexAcp.command({
        executable: '/opt/codex/bin/codex',
        prepared,
        runDir,
        agentHome,
        modelBaseUrl: 'http://127.0.0.1:4321',
      });
      expect(path.basename(command.file)).toBe('codex-acp');
      expect(fs.statSync(command.file).isFile()).toBe(true);
      expect(command.args).not.toContain('--profile');
      const overrides = command.args.filter((_, i) => command.args[i - 1] === '-c');
      expect(command.args.filter((arg) => arg === '-c')).toHaveLength(overrides.length);
      expect(overrides).toEqual(
        expect.arrayContaining([
          'model_provider="agent-harness"',
          'model="gpt-5.5"',
          'sandbox_mode="danger-full-access"',
          'approval_policy="untrusted"',
          'features.unified_exec=false',
          'model_providers.agent-harness.base_url="http://127.0.0.1:4321/v1"',
          `projects={${JSON.stringify(runDir)}={trust_level="trusted"}}`,
        ]),
      );
      // The profile's own sandbox and approval keys are replaced, not repeated.
      expect(overrides.filter((o) => o.startsWith('sandbox_mode='))).toHaveLength(1);
      expect(overrides.filter((o) => o.startsWith('approval_policy='))).toHaveLength(1);
      expect(command.env).toEqual({});
    },
  );
});
