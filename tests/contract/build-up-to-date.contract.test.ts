/**
 * scripts/build.mjs without `--clean` (prepare, the tests' global setup) does nothing when its last whole build is
 * newer than every input: an incremental tsc took ~8 s of CPU to find that out at the start of every test run. A
 * changed, added or deleted source, or a changed config, builds again.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { REPO } from '../helpers/cli.js';

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'ah-build-'));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

/** Runs a build script (`<root>/scripts/build.mjs`) in `root`. */
const build = (root: string) =>
  spawnSync(process.execPath, [path.join(root, 'scripts', 'build.mjs')], { cwd: root, encoding: 'utf8' });

const UP_TO_DATE = 'dist/ is up to date with src/';

/** Sets `file`'s mtime `seconds` from now. */
const age = (file: string, seconds: number) => {
  const at = new Date(Date.now() + seconds * 1000);
  fs.utimesSync(file, at, at);
};

/**
 * A copy of the build script in a project of its own, built a minute ago: its stamp newer than every input. No
 * typescript resolves from there, so a build that does start fails at once, saying so.
 */
function builtProject(name: string): string {
  const root = path.join(tmp, name);
  fs.mkdirSync(path.join(root, 'scripts'), { recursive: true });
  fs.mkdirSync(path.join(root, 'src', 'cli'), { recursive: true });
  fs.mkdirSync(path.join(root, 'dist', 'cli'), { recursive: true });
  fs.copyFileSync(path.join(REPO, 'scripts', 'build.mjs'), path.join(root, 'scripts', 'build.mjs'));
  fs.writeFileSync(path.join(root, 'src', 'cli', 'main.ts'), 'export {};\n');
  fs.writeFileSync(path.join(root, 'src', 'old.ts'), 'export {};\n');
  fs.writeFileSync(path.join(root, 'package.json'), '{}\n');
  fs.writeFileSync(path.join(root, 'tsconfig.json'), '{}\n');
  fs.writeFileSync(path.join(root, 'dist', 'cli', 'main.js'), 'export {};\n');
  for (const entry of [
    'scripts/build.mjs',
    'src/cli/main.ts',
    'src/old.ts',
    'src/cli',
    'src',
    'package.json',
    'tsconfig.json',
  ])
    age(path.join(root, entry), -120);
  fs.writeFileSync(path.join(root, 'dist', '.build-stamp'), 'built\n');
  age(path.join(root, 'dist', '.build-stamp'), -60);
  return root;
}

describe('the incremental build', () => {
  it('does nothing after a whole build of the same sources (this checkout, just built by the global setup)', () => {
    const stamp = path.join(REPO, 'dist', '.build-stamp');
    const before = fs.statSync(stamp).mtimeMs;
    const result = build(REPO);
    expect(result.status, result.stderr).toBe(0);
    expect(result.stdout).toContain(UP_TO_DATE);
    expect(fs.statSync(stamp).mtimeMs).toBe(before);
  });

  it('builds again when a source, a config or the script is newer, a source is gone, or no build finished', () => {
    const unchanged = build(builtProject('unchanged'));
    expect(unchanged.status, unchanged.stderr).toBe(0);
    expect(unchanged.stdout).toContain(UP_TO_DATE);

    const changes: Record<string, (root: string) => void> = {
      'a changed source': (root) => age(path.join(root, 'src', 'cli', 'main.ts'), 0),
      'a deleted source': (root) => fs.rmSync(path.join(root, 'src', 'old.ts')),
      'a changed config': (root) => age(path.join(root, 'tsconfig.json'), 0),
      'a new lock file': (root) => fs.writeFileSync(path.join(root, 'package-lock.json'), '{}\n'),
      'a changed build script': (root) => age(path.join(root, 'scripts', 'build.mjs'), 0),
      'an unfinished build (no stamp)': (root) => fs.rmSync(path.join(root, 'dist', '.build-stamp')),
    };
    for (const [what, change] of Object.entries(changes)) {
      const root = builtProject(what.replace(/\W+/g, '-'));
      change(root);
      const result = build(root);
      // It started the build: tsc, which this copy cannot resolve.
      expect(result.stdout, what).not.toContain(UP_TO_DATE);
      expect(result.stderr, what).toContain('typescript is not installed');
      expect(fs.existsSync(path.join(root, 'dist', '.build-stamp')), what).toBe(false);
    }
  });
});
