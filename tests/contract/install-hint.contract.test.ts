/**
 * What a missing engine says to install: that engine's own package at the version agent-harness pins in its
 * package.json (never another engine's package, never an unpinned one), in the ENGINE_EXECUTABLE_MISSING hint and in
 * the ACP adapter's message.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { acpAdapterMissing } from '../../src/engines/acp/adapter-package.js';
import { engineInstallHint } from '../../src/engines/install-hint.js';
import { engineIds, loadEngine } from '../../src/engines/registry.js';
import { ERROR_CODES } from '../../src/errors/codes.js';
import { resolveExecutable } from '../../src/runtime/executables.js';
import { resolveHarnessPaths } from '../../src/runtime/paths.js';
import { installCommand } from '../../src/runtime/pinned-packages.js';
import { REPO } from '../helpers/cli.js';
import { thrownBy } from '../helpers/errors.js';

const pins = (
  JSON.parse(fs.readFileSync(path.join(REPO, 'package.json'), 'utf8')) as {
    devDependencies: Record<string, string>;
  }
).devDependencies;
const adapters = await Promise.all(engineIds().map((id) => loadEngine(id)));
const packages = adapters.flatMap((a) => (a.packageName ? [a.packageName] : []));
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'ah-install-hint-'));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

describe('install hints', () => {
  it.each(adapters.filter((a) => a.packageName).map((a) => [a.id, a] as const))(
    "%s's hint names its own package at the pinned version, and no other engine's",
    (_id, adapter) => {
      const hint = engineInstallHint(adapter);
      // A package the checkout does not pin (qwen: not in the lock file, see the README) falls back, like the hint, to
      // the version its adapter was checked against.
      const pinned =
        pins[adapter.packageName!] ??
        (typeof adapter.checkedVersions === 'string' ? adapter.checkedVersions : undefined);
      expect(pinned, `${adapter.packageName} is not pinned in package.json`).toMatch(/^\d+\.\d+\.\d+/);
      expect(hint).toContain(`npm i -D ${adapter.packageName}@${pinned}`);
      for (const other of packages.filter((p) => p !== adapter.packageName)) expect(hint).not.toContain(other);
    },
  );

  it('an engine with no package served says to put its executable on PATH', () => {
    const none = adapters.find((a) => !a.packageName);
    expect(none, 'iflow serves no npm package').toBeDefined();
    expect(engineInstallHint(none!)).toBe(
      `${none!.id} has no npm package served here: put its \`${none!.executableName}\` executable on PATH.`,
    );
  });

  it('ENGINE_EXECUTABLE_MISSING carries the hint it is given; the generic one names no engine package', () => {
    const paths = resolveHarnessPaths({ env: {}, projectRoot: tmp });
    const gemini = adapters.find((a) => a.id === 'gemini')!;
    const error = thrownBy(() =>
      resolveExecutable('no-such-engine', paths, path.join(tmp, 'bin'), engineInstallHint(gemini)),
    ) as { code: string; hint: string };
    expect(error.code).toBe('ENGINE_EXECUTABLE_MISSING');
    expect(error.hint).toContain(`npm i -D @google/gemini-cli@${pins['@google/gemini-cli']}`);
    expect(error.hint).not.toContain('@openai/codex');
    for (const name of packages) expect(ERROR_CODES.ENGINE_EXECUTABLE_MISSING).not.toContain(name);
  });

  it("a missing ACP adapter names the adapter's pinned version", () => {
    const name = '@zed-industries/claude-agent-acp';
    expect(installCommand(name)).toBe(`npm i -D ${name}@${pins[name]}`);
    expect(acpAdapterMissing('claude', name, '/nowhere').message).toContain(`npm i -D ${name}@${pins[name]}`);
    expect(installCommand('not-pinned-package')).toBe('npm i -D not-pinned-package');
  });
});
