/**
 * examples/skill-matrix run the way a user runs it, on the built package: one skill on codex, claude, gemini and
 * opencode from a seeded repo, with skill, tool-call and exact-diff assertions and a resumed turn. Its optional
 * failing case is switched on, so the report's failure headlines and tool calls can be checked too. This run's
 * `AGENT_HARNESS_ENGINES` reaches the example as it would a user's CI job: those of its four engines the run left out
 * skip, saying so (`npm test` runs codex and claude; CI, every engine).
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EngineId } from '../../src/protocol/index.js';
import { ConsistencyReportSchema } from '../../src/report/schema.js';
import { registryEngines } from '../helpers/engines.js';
import { prepareExampleProject } from '../helpers/example-project.js';
import { scaled } from '../helpers/load-scaled.js';

let project: string;

/** The example's engines (its vitest.config.ts), and those of them this run enables. */
const EXAMPLE_ENGINES: EngineId[] = ['claude', 'codex', 'gemini', 'opencode'];
const enabled = EXAMPLE_ENGINES.filter((engine) => registryEngines().includes(engine));
const leftOut = EXAMPLE_ENGINES.filter((engine) => !enabled.includes(engine));

beforeAll(() => {
  project = prepareExampleProject('skill-matrix');
}, scaled(120_000));

afterAll(() => fs.rmSync(project, { recursive: true, force: true }));

describe('examples/skill-matrix on the built package', () => {
  it.skipIf(enabled.length === 0)(
    'passes on its engines; the failing case reads well in consistency.md (headline and tool calls)',
    () => {
      const home = path.join(project, 'host-home');
      fs.mkdirSync(home);
      const result = spawnSync(
        process.execPath,
        [path.join(project, 'node_modules', 'vitest', 'vitest.mjs'), 'run', '--reporter=verbose'],
        {
          cwd: project,
          env: {
            PATH: process.env.PATH,
            HOME: home,
            CI: 'true',
            NO_COLOR: '1',
            SHOW_A_FAILURE: '1',
            ...(process.env.AGENT_HARNESS_ENGINES ? { AGENT_HARNESS_ENGINES: process.env.AGENT_HARNESS_ENGINES } : {}),
          },
          encoding: 'utf8',
          timeout: scaled(400_000),
        },
      );
      // The deliberately failing case fails the run; everything else passes.
      expect(result.status, `${result.stdout}\n${result.stderr}`).toBe(1);
      const report = ConsistencyReportSchema.parse(
        JSON.parse(fs.readFileSync(path.join(project, 'reports', 'consistency.json'), 'utf8')),
      );
      const csv = report.tests.filter((t) => t.name.startsWith('csv-stats summarizes'));
      const ran = csv.filter((t) => t.state !== 'skipped');
      expect(ran.map((t) => `${t.engine}:${t.state}`).sort(), JSON.stringify(csv.map((t) => t.errors))).toEqual(
        enabled.map((engine) => `${engine}:passed`),
      );
      expect(ran.every((t) => t.attempts === 2)).toBe(true);
      // An engine the run left out is skipped, and the skip names the variable that left it out.
      for (const engine of leftOut)
        expect(result.stdout).toMatch(
          new RegExp(`engine ${engine} is known but not enabled in this run: AGENT_HARNESS_ENGINES=`),
        );
      const row = report.matrix.find((r) => r.case.startsWith('csv-stats summarizes'));
      expect(
        Object.entries(row?.engines ?? {})
          .map(([engine, cell]) => `${engine}:${cell.outcome}`)
          .sort(),
      ).toEqual(
        [...enabled.map((engine) => `${engine}:passed`), ...leftOut.map((engine) => `${engine}:skipped`)].sort(),
      );
      expect(row?.disagree).toBe(false);
      const failing = report.tests.filter((t) => t.name.startsWith('a failing shell call') && t.state !== 'skipped');
      expect(failing.map((t) => t.state)).toEqual(enabled.map(() => 'failed'));
      const md = fs.readFileSync(path.join(project, 'reports', 'consistency.md'), 'utf8');
      // A failure headline under the file's table, and the tool calls the matcher saw, normalized on every engine.
      expect(md).toMatch(
        new RegExp(
          `\\*\\*❌ ${enabled[0]} > a failing shell call shows up in the report\\*\\*: expected the agent to have called tool \\{"command":"cat missing.csv","exitCode":0\\}`,
        ),
      );
      expect(md).toContain('Tool calls (1):');
      expect(md.match(/shell [^:\n]+: cat missing\.csv → failed, exit 1/g)?.length).toBe(enabled.length);
      expect(fs.readdirSync(home)).toEqual([]);
    },
    scaled(420_000),
  );
});
