/**
 * The harness starts gemini's bundle (`bundle/gemini.js`, run by its `#!/usr/bin/env node` line) with Node itself and
 * `--liftoff-only` (no TurboFan recompilation of the tree-sitter WebAssembly gemini parses shell commands with), only
 * for the layout of the pinned package: anything else runs as installed.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { resolveGeminiNativeLaunch } from '../../src/engines/gemini/native-launch.js';

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'ah-gemini-launch-'));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

const SCRIPT = fs.realpathSync(path.resolve('node_modules/@google/gemini-cli/bundle/gemini.js'));

/** A `bundle/gemini.js` under a package named `name`; returns the script's path. */
function bundleOf(name: string): string {
  const pkg = path.join(tmp, name.replace(/\W/g, '_'));
  fs.mkdirSync(path.join(pkg, 'bundle'), { recursive: true });
  fs.writeFileSync(path.join(pkg, 'package.json'), JSON.stringify({ name, version: '0.0.0' }));
  fs.writeFileSync(path.join(pkg, 'bundle', 'gemini.js'), '#!/usr/bin/env node\n');
  return path.join(pkg, 'bundle', 'gemini.js');
}

describe('gemini native launch', () => {
  it('runs the installed bundle (through its bin link) with Node and --liftoff-only, recording the script', () => {
    expect(resolveGeminiNativeLaunch(path.resolve('node_modules/.bin/gemini'))).toEqual({
      file: process.execPath,
      args: ['--liftoff-only', SCRIPT],
      env: {},
      launcher: SCRIPT,
    });
  });

  it('leaves anything else as installed', () => {
    expect(resolveGeminiNativeLaunch(bundleOf('not-gemini'))).toBeNull();
    expect(resolveGeminiNativeLaunch(path.join(tmp, 'no-such-file'))).toBeNull();
    expect(resolveGeminiNativeLaunch(path.resolve('node_modules/.bin/qwen'))).toBeNull();
    expect(resolveGeminiNativeLaunch(bundleOf('@google/gemini-cli'))).not.toBeNull();
  });
});
