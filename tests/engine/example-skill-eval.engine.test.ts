/**
 * examples/skill-eval run the way a user runs it, on the built package, keyless: the hello-file skill on codex and
 * claude, five trials per arm (with the skill, and the baseline without it) over a per-trial script, a grader, a
 * trigger set and the plugin's pass-rate gate. The run passes, and consistency.json's statistics say per engine what
 * the script makes true: 4 of 5 with the skill (flaky, strip PPFPP), 1 of 5 without, the Wilson interval, pass@k,
 * the lift over the baseline (paired), the gate held, and the trigger set's precision and recall.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newcombeInterval } from '../../src/evals/lift.js';
import { passAtK, wilsonInterval } from '../../src/evals/stats.js';
import { ConsistencyReportSchema } from '../../src/report/schema.js';
import { prepareExampleProject } from '../helpers/example-project.js';
import { missingReasons } from '../helpers/engines.js';
import { scaled } from '../helpers/load-scaled.js';

const missing = await missingReasons();
let project: string;

beforeAll(() => {
  project = prepareExampleProject('skill-eval');
}, scaled(120_000));

afterAll(() => fs.rmSync(project, { recursive: true, force: true }));

const round = (x: number): number => Math.round(x * 1e6) / 1e6;

describe.skipIf(Boolean(missing.codex || missing.claude))('examples/skill-eval on the built package', () => {
  it(
    'passes keyless on codex and claude, with the statistics, lift, gate and triggers the script makes true',
    () => {
      const home = path.join(project, 'host-home');
      fs.mkdirSync(home);
      const result = spawnSync(
        process.execPath,
        [path.join(project, 'node_modules', 'vitest', 'vitest.mjs'), 'run', '--reporter=verbose'],
        {
          cwd: project,
          env: { PATH: process.env.PATH, HOME: home, CI: 'true', NO_COLOR: '1' },
          encoding: 'utf8',
          timeout: scaled(500_000),
        },
      );
      expect(result.status, `${result.stdout}\n${result.stderr}`).toBe(0);
      const report = ConsistencyReportSchema.parse(
        JSON.parse(fs.readFileSync(path.join(project, 'reports', 'consistency.json'), 'utf8')),
      );
      const rows = report.statistics!.rows;
      const skilled = wilsonInterval(4, 5);
      const lift = newcombeInterval({ passes: 4, n: 5 }, { passes: 1, n: 5 });
      for (const engine of ['claude', 'codex']) {
        const withSkill = rows.find((r) => r.engine === engine && r.arm === 'with-skill');
        const baseline = rows.find((r) => r.engine === engine && r.arm === 'baseline');
        expect(withSkill, JSON.stringify(rows)).toMatchObject({
          case: 'greets by file',
          n: 5,
          passed: 4,
          infra_failed: 0,
          pass_rate: 0.8,
          ci95: [round(skilled.low), round(skilled.high)],
          pass_at_k: { '1': 0.8, '3': round(passAtK(5, 4, 3)) },
          flaky: true,
          strip: 'PPFPP',
          lift: { vs: 'baseline', diff: 0.6, ci95: [round(lift.low), round(lift.high)] },
        });
        expect(withSkill!.lift!.mcnemar).toBeDefined();
        expect(withSkill!.failures).toEqual([
          expect.objectContaining({ trial: 2, failureClass: 'task', handle: expect.any(String) }),
        ]);
        expect(baseline).toMatchObject({ n: 5, passed: 1, strip: 'PFFFF', flaky: true });
      }
      expect(report.statistics!.gates?.length).toBeGreaterThan(0);
      expect(report.statistics!.gates!.every((g) => g.pass)).toBe(true);
      const triggers = report.statistics!.triggers!.skills as Array<Record<string, unknown>>;
      expect(
        triggers
          .filter((t) => t.skill === 'hello-file')
          .map((t) => [t.engine, t.precision, t.recall])
          .sort(),
      ).toEqual([
        ['claude', 1, 1],
        ['codex', 1, 1],
      ]);
      expect(fs.readFileSync(path.join(project, 'reports', 'consistency.md'), 'utf8')).toContain('PPFPP');
    },
    scaled(540_000),
  );
});
