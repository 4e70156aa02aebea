/**
 * The harness starts qwen's CLI (`cli.js`) in place of its npm launcher (`cli-entry.js`) only as the launcher itself
 * would, plus `--liftoff-only` (no TurboFan recompilation of the tree-sitter WebAssembly qwen parses shell commands
 * with). Checked against the real launcher of the pinned package, run in a copy of its layout whose `cli.js` prints
 * the flags, argv and variables it was started with.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { resolveQwenNativeLaunch } from '../../src/engines/qwen/native-launch.js';

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'ah-qwen-launch-'));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

const PACKAGE = path.resolve('node_modules/@qwen-code/qwen-code');

/** A copy of the package's launcher and manifest under `root`, with a `cli.js` that reports; returns the launcher. */
function layout(root: string): string {
  const pkg = path.join(root, 'node_modules', '@qwen-code', 'qwen-code');
  fs.mkdirSync(pkg, { recursive: true });
  fs.copyFileSync(path.join(PACKAGE, 'cli-entry.js'), path.join(pkg, 'cli-entry.js'));
  fs.copyFileSync(path.join(PACKAGE, 'package.json'), path.join(pkg, 'package.json'));
  fs.writeFileSync(
    path.join(pkg, 'cli.js'),
    'console.log(JSON.stringify({ execArgv: process.execArgv, argv: process.argv.slice(1), cli: process.env.QWEN_CODE_CLI, version: process.env.QWEN_CODE_STARTUP_VERSION }));\n',
  );
  return path.join(pkg, 'cli-entry.js');
}

describe('qwen native launch', () => {
  it("starts cli.js with the launcher's flag and variables, plus --liftoff-only", () => {
    const launcher = fs.realpathSync(layout(path.join(tmp, 'a')));
    const home = path.join(tmp, 'home');
    fs.mkdirSync(home, { recursive: true });
    const out = execFileSync(process.execPath, [launcher, '-p', 'hi'], {
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: home },
      encoding: 'utf8',
    });
    const launched = JSON.parse(out.trim().split('\n').at(-1)!);
    const native = resolveQwenNativeLaunch(launcher);
    expect(native).not.toBeNull();
    expect(native!.file).toBe(process.execPath);
    expect(native!.launcher).toBe(launcher);
    // The launcher's child: `--expose-gc cli.js ARGS`; the stand-in adds only --liftoff-only.
    expect(launched.execArgv).toEqual(['--expose-gc']);
    expect(native!.args).toEqual([...launched.execArgv, '--liftoff-only', launched.argv[0]]);
    expect(launched.argv.slice(1)).toEqual(['-p', 'hi']);
    expect(native!.env).toEqual({ QWEN_CODE_CLI: launched.cli, QWEN_CODE_STARTUP_VERSION: launched.version });
  });

  it('leaves anything else as installed', () => {
    const other = path.join(tmp, 'b', 'cli-entry.js');
    fs.mkdirSync(path.dirname(other), { recursive: true });
    fs.writeFileSync(path.join(tmp, 'b', 'package.json'), JSON.stringify({ name: 'not-qwen', version: '1.0.0' }));
    fs.writeFileSync(other, '');
    fs.writeFileSync(path.join(tmp, 'b', 'cli.js'), '');
    expect(resolveQwenNativeLaunch(other)).toBeNull();
    expect(resolveQwenNativeLaunch(path.join(tmp, 'no-such-file'))).toBeNull();
    expect(resolveQwenNativeLaunch(path.resolve('node_modules/.bin/gemini'))).toBeNull();
    const noCli = layout(path.join(tmp, 'c'));
    fs.rmSync(path.join(path.dirname(noCli), 'cli.js'));
    expect(resolveQwenNativeLaunch(noCli)).toBeNull();
  });
});
