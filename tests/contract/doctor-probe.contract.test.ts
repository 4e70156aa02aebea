/**
 * `doctor`'s engine probes: a healthy CLI that is slow once passes on the second try, and a FAIL says why — the
 * timeout and how long it waited, the exit code with the end of stderr, or why the process could not start. Fake
 * engine executables (shell scripts) stand in the managed prefix, where the doctor looks first.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { probeVersion } from '../../src/cli/version-probe.js';
import { loadEngine, engineIds } from '../../src/engines/registry.js';
import { createCliSandbox, runCliProcess } from '../helpers/cli.js';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ah-doctor-probe-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));
const env = { PATH: process.env.PATH ?? '' };

/** Writes an executable shell script named `name` into `into` and returns its path. */
function fakeExecutable(into: string, name: string, body: string): string {
  fs.mkdirSync(into, { recursive: true });
  const file = path.join(into, name);
  fs.writeFileSync(file, `#!/bin/sh\n${body}\n`, { mode: 0o755 });
  return file;
}

describe('probeVersion', () => {
  it('gives the first line of a healthy --version', async () => {
    const file = fakeExecutable(dir, 'healthy', "printf 'fake-cli 1.2.3\\nCopyright nobody\\n'");
    expect(await probeVersion(file, { env })).toEqual({ ok: true, version: 'fake-cli 1.2.3', tries: 1 });
  });

  it('tries once more when the first try fails, and passes when the second answers', async () => {
    const marker = path.join(dir, 'tried-once');
    const file = fakeExecutable(
      dir,
      'flaky',
      `if [ -e '${marker}' ]; then echo 'flaky 2.0'; exit 0; fi; : > '${marker}'; echo 'busy' >&2; exit 75`,
    );
    expect(await probeVersion(file, { env })).toEqual({ ok: true, version: 'flaky 2.0', tries: 2 });
  });

  it('a failure names the exit code and the end of stderr, after every try', async () => {
    const file = fakeExecutable(dir, 'broken', "echo 'line one' >&2; echo 'Error: cannot load module x' >&2; exit 3");
    const result = await probeVersion(file, { env, tries: 2 });
    expect(result).toEqual({
      ok: false,
      timedOut: false,
      tries: 2,
      reason: '`--version` exited with code 3; stderr: line one | Error: cannot load module x',
    });
  });

  it('a timeout says how long it waited', async () => {
    const file = fakeExecutable(dir, 'hanging', 'exec sleep 600');
    const result = await probeVersion(file, { env, timeoutMs: 500, tries: 1 });
    expect(result).toMatchObject({ ok: false, timedOut: true, tries: 1 });
    expect(result.ok === false && result.reason).toBe('`--version` timed out after 500 ms; no stderr');
  });

  it('a process that cannot start says why', async () => {
    const file = path.join(dir, 'bad-interpreter');
    fs.writeFileSync(file, '#!/nonexistent/interpreter\n', { mode: 0o755 });
    const result = await probeVersion(file, { env, tries: 1 });
    expect(result).toMatchObject({ ok: false, timedOut: false });
    expect(result.ok === false && result.reason).toMatch(/^`--version` could not start: .*ENOENT/);
  });
});

describe('doctor', () => {
  it('prints why an engine check failed: the timeout, or the exit code with stderr', async () => {
    const sandbox = createCliSandbox();
    try {
      const bin = path.join(sandbox.prefix, 'bin');
      const names = Object.fromEntries(
        await Promise.all(engineIds().map(async (id) => [id, (await loadEngine(id)).executableName] as const)),
      );
      for (const id of engineIds()) fakeExecutable(bin, names[id]!, `echo '${id}-fake 1.0.0'`);
      fakeExecutable(bin, names.gemini!, "echo 'gemini: missing dependency foo' >&2; exit 7");
      fakeExecutable(bin, names.opencode!, 'exec sleep 600');
      const run = runCliProcess(sandbox, ['doctor', '--timeout-ms', '800']);
      expect(run.status, run.stderr).toBe(1);
      expect(run.stdout).toContain(`ok   engine codex: ${path.join(bin, names.codex!)} (codex-fake 1.0.0)`);
      expect(run.stdout).toContain(
        `FAIL engine gemini: ${path.join(bin, names.gemini!)}: \`--version\` exited with code 7; stderr: gemini: missing dependency foo (after 2 tries)`,
      );
      expect(run.stdout).toMatch(/ {5}error ENGINE_SPAWN_FAILED: .*--version failed: `--version` exited with code 7/);
      expect(run.stdout).toContain(
        `FAIL engine opencode: ${path.join(bin, names.opencode!)}: \`--version\` timed out after 800 ms; no stderr (after 2 tries)`,
      );
      expect(run.stdout).toMatch(/ {5}error ENGINE_TIMEOUT: .*did not answer/);
      expect(run.stdout).toContain('doctor --timeout-ms <ms>');
      expect(run.stdout).not.toContain('undefined');
    } finally {
      sandbox.cleanup();
    }
  });

  it('refuses a --timeout-ms that is not a positive integer, naming it', () => {
    const sandbox = createCliSandbox();
    try {
      const run = runCliProcess(sandbox, ['doctor', '--timeout-ms', 'soon']);
      expect(run.status).not.toBe(0);
      expect(run.stderr).toContain('--timeout-ms');
    } finally {
      sandbox.cleanup();
    }
  });
});
