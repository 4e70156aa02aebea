/**
 * The example user project (examples/user-project) run the way a user runs it: the package is built, linked
 * into a copy of the project as node_modules/agent-harness (its `exports` → dist/), and `vitest run` runs there
 * with real codex. The reports it writes are checked.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConsistencyReportSchema } from '../../src/report/schema.js';
import { prepareExampleProject, REPO } from '../helpers/example-project.js';
import { scaled } from '../helpers/load-scaled.js';

let project: string;

beforeAll(() => {
  project = prepareExampleProject('user-project');
}, scaled(120_000));

afterAll(() => fs.rmSync(project, { recursive: true, force: true }));

describe('example user project on the built package', () => {
  it('passes its skill test on codex and writes consistency.json, consistency.md and junit.xml', () => {
    const home = path.join(project, 'host-home');
    fs.mkdirSync(home);
    const result = spawnSync(process.execPath, [path.join(project, 'node_modules', 'vitest', 'vitest.mjs'), 'run'], {
      cwd: project,
      env: { PATH: process.env.PATH, HOME: home, CI: 'true', NO_COLOR: '1' },
      encoding: 'utf8',
      timeout: scaled(170_000),
    });
    expect(result.status, `${result.stdout}\n${result.stderr}`).toBe(0);
    // The package was loaded from dist/, not from the sources.
    expect(fs.existsSync(path.join(REPO, 'dist', 'public', 'vitest.js'))).toBe(true);
    const report = ConsistencyReportSchema.parse(
      JSON.parse(fs.readFileSync(path.join(project, 'reports', 'consistency.json'), 'utf8')),
    );
    const test = report.tests.find((t) => t.name.includes('hello-file'));
    expect(test).toMatchObject({ state: 'passed', engine: 'codex' });
    // The attempt's fcmp and meta were attached to the test and copied by Vitest.
    expect(test?.attachments).toHaveLength(2);
    for (const file of test?.attachments ?? [])
      expect(fs.existsSync(path.isAbsolute(file) ? file : path.join(project, file)), file).toBe(true);
    expect(fs.readFileSync(path.join(project, 'reports', 'consistency.md'), 'utf8')).toContain('hello-file');
    expect(fs.readFileSync(path.join(project, 'reports', 'junit.xml'), 'utf8')).toMatch(
      /<property name="engine" value="codex"/,
    );
    expect(fs.readdirSync(home)).toEqual([]);
  });
});
