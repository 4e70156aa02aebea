/**
 * The packed package.json keeps no `prepare` script: it builds dist/ with scripts/build.mjs, which the tarball does
 * not ship (package.json `files`), and npm lists it at every install as a script to approve. prepack renames it
 * (scripts/pack-manifest.mjs disable), postpack puts it back.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { REPO } from '../helpers/cli.js';

const manifestFile = path.join(REPO, 'package.json');
const manifest = JSON.parse(fs.readFileSync(manifestFile, 'utf8')) as {
  files: string[];
  scripts: Record<string, string>;
};
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'ah-pack-manifest-'));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

const packManifest = (action: string, file: string) =>
  spawnSync(process.execPath, [path.join(REPO, 'scripts', 'pack-manifest.mjs'), action, file], { encoding: 'utf8' });

describe('the packed manifest', () => {
  it('prepack drops `prepare` (whose scripts/ is not packed) after the build, postpack restores it', () => {
    expect(manifest.files.some((entry) => entry === 'scripts' || entry.startsWith('scripts/'))).toBe(false);
    expect(manifest.scripts.prepare).toContain('scripts/');
    expect(manifest.scripts.prepack).toMatch(
      /^node scripts\/build\.mjs --clean && node scripts\/pack-manifest\.mjs disable$/,
    );
    expect(manifest.scripts.postpack).toBe('node scripts/pack-manifest.mjs enable');
  });

  it('disable leaves no prepare and changes nothing else; enable gives back the same bytes', () => {
    const copy = path.join(tmp, 'package.json');
    const original = fs.readFileSync(manifestFile, 'utf8');
    fs.writeFileSync(copy, original);
    expect(packManifest('disable', copy).status).toBe(0);
    const packed = JSON.parse(fs.readFileSync(copy, 'utf8')) as typeof manifest;
    expect(packed.scripts.prepare).toBeUndefined();
    const { prepare, ...rest } = manifest.scripts;
    expect(packed.scripts).toEqual({ ...rest, _prepare: prepare });
    expect({ ...packed, scripts: null }).toEqual({ ...manifest, scripts: null });
    // Twice is harmless (a pack retried), and enable repairs a checkout a failed pack left behind.
    expect(packManifest('disable', copy).status).toBe(0);
    expect(packManifest('enable', copy).status).toBe(0);
    expect(fs.readFileSync(copy, 'utf8')).toBe(original);
  });

  it('refuses an unknown action, naming it', () => {
    const run = packManifest('strip', path.join(tmp, 'package.json'));
    expect(run.status).toBe(2);
    expect(run.stderr).toContain('usage: node scripts/pack-manifest.mjs disable|enable (got "strip")');
  });
});
