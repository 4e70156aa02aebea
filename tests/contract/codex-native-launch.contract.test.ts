/**
 * The harness starts codex's native binary in place of its npm launcher (`bin/codex.js`) only as the launcher itself
 * would: same file, same variables. Checked against the real launcher script of the pinned package, run in a copy of
 * the npm layout whose "native binary" is a shell script printing what it was started as and with.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { resolveCodexNativeLaunch } from '../../src/engines/codex/native-launch.js';

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'ah-codex-launch-'));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

const TARGET =
  process.arch === 'arm64'
    ? { triple: 'aarch64-unknown-linux-musl', pkg: '@openai/codex-linux-arm64' }
    : { triple: 'x86_64-unknown-linux-musl', pkg: '@openai/codex-linux-x64' };
const REAL_LAUNCHER = fs.realpathSync(path.resolve('node_modules/@openai/codex/bin/codex.js'));

/** An npm layout under `root` with the real launcher and a fake native binary; returns the launcher's path. */
function npmLayout(root: string): string {
  const pkg = path.join(root, 'node_modules', '@openai', 'codex');
  fs.mkdirSync(path.join(pkg, 'bin'), { recursive: true });
  fs.copyFileSync(REAL_LAUNCHER, path.join(pkg, 'bin', 'codex.js'));
  fs.copyFileSync(path.resolve('node_modules/@openai/codex/package.json'), path.join(pkg, 'package.json'));
  const platform = path.join(root, 'node_modules', ...TARGET.pkg.split('/'));
  const bin = path.join(platform, 'vendor', TARGET.triple, 'bin');
  fs.mkdirSync(bin, { recursive: true });
  fs.writeFileSync(
    path.join(platform, 'package.json'),
    JSON.stringify({ name: '@openai/codex', version: '0.0.0-fake' }),
  );
  fs.writeFileSync(
    path.join(bin, 'codex'),
    '#!/bin/sh\necho "FILE=$0"\necho "ARGS=$*"\nenv | grep "^CODEX_" | sort\n',
    { mode: 0o755 },
  );
  return path.join(pkg, 'bin', 'codex.js');
}

/** What the real launcher started: the file, the args, and the CODEX_* variables it added. */
function launchedBy(launcher: string): { file: string; args: string; env: Record<string, string> } {
  const out = execFileSync(process.execPath, [launcher, 'exec', '--json', 'hi'], {
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
    encoding: 'utf8',
  });
  const lines = out.trim().split('\n');
  const env = Object.fromEntries(
    lines
      .filter((line) => line.startsWith('CODEX_'))
      .map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)]),
  );
  return {
    file: lines.find((line) => line.startsWith('FILE='))!.slice(5),
    args: lines.find((line) => line.startsWith('ARGS='))!.slice(5),
    env,
  };
}

describe.skipIf(process.platform !== 'linux')('codex native launch', () => {
  it('starts the file the npm launcher starts, with the variables it adds', () => {
    const launcher = npmLayout(path.join(tmp, 'npm'));
    const real = launchedBy(launcher);
    expect(real.args).toBe('exec --json hi');
    const native = resolveCodexNativeLaunch(launcher);
    expect(native).not.toBeNull();
    expect(native!.file).toBe(real.file);
    expect(native!.env).toEqual(real.env);
    expect(native!.launcher).toBe(fs.realpathSync(launcher));
  });

  it('keeps the launcher where it would set another variable (a pnpm store)', () => {
    const root = path.join(tmp, 'pnpm');
    const launcher = npmLayout(root);
    fs.writeFileSync(path.join(root, 'node_modules', '.modules.yaml'), 'layoutVersion: 5\n');
    expect(launchedBy(launcher).env.CODEX_MANAGED_BY_PNPM).toBe('1');
    expect(resolveCodexNativeLaunch(launcher)).toBeNull();
  });

  it('keeps the launcher when the native binary is missing, and runs anything else as it is', () => {
    const root = path.join(tmp, 'missing');
    const launcher = npmLayout(root);
    fs.rmSync(path.join(root, 'node_modules', ...TARGET.pkg.split('/'), 'vendor'), { recursive: true });
    expect(resolveCodexNativeLaunch(launcher)).toBeNull();
    const other = path.join(tmp, 'bin', 'codex.js');
    fs.mkdirSync(path.dirname(other), { recursive: true });
    fs.writeFileSync(other, 'console.log(1)\n');
    expect(resolveCodexNativeLaunch(other)).toBeNull();
    expect(resolveCodexNativeLaunch(path.join(tmp, 'no-such-file'))).toBeNull();
  });

  it('finds the binary of the installed package', () => {
    const native = resolveCodexNativeLaunch(path.resolve('node_modules/.bin/codex'));
    expect(native?.launcher).toBe(REAL_LAUNCHER);
    expect(fs.statSync(native!.file).isFile()).toBe(true);
    expect(native!.env.CODEX_MANAGED_PACKAGE_ROOT).toBe(path.dirname(path.dirname(REAL_LAUNCHER)));
  });
});
