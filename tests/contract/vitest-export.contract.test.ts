/**
 * The plugin's per-test export: a child Vitest runs fixtures/vitest-export-project (plugin with
 * `export: { atif: true, otlp: true }`), whose test starts codex — a fake executable in the managed prefix replaying
 * a golden stream, no engine — and the reporter writes atif.1.json and otlp.1.json beside the attempt's audit.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AtifTrajectorySchema } from '../../src/export/atif-schema.js';
import { createCliSandbox, installFakeEngine, REPO, type CliSandbox } from '../helpers/cli.js';

const VITEST = path.join(REPO, 'node_modules', 'vitest', 'vitest.mjs');
const PROJECT = path.join('fixtures', 'vitest-export-project');
let sandbox: CliSandbox;

beforeAll(() => {
  sandbox = createCliSandbox();
  installFakeEngine(sandbox, 'codex', {
    stdoutFile: path.join(REPO, 'fixtures', 'streams', 'codex', 'turn1.stdout.jsonl'),
  });
});
afterAll(() => sandbox.cleanup());

function childEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env))
    if (!key.startsWith('VITEST') && key !== 'TEST' && key !== 'NODE_OPTIONS') env[key] = value;
  delete env.GITHUB_STEP_SUMMARY;
  delete env.OTEL_EXPORTER_OTLP_ENDPOINT;
  delete env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT;
  return { ...env, ...sandbox.env, PATH: process.env.PATH, CI: 'true', NO_COLOR: '1', ...extra };
}

describe('agentHarness({ export })', () => {
  it('writes ATIF and OTLP beside each attempt of each test', () => {
    const runRoot = path.join(sandbox.root, 'runs');
    const result = spawnSync(process.execPath, [VITEST, 'run', '--root', PROJECT], {
      cwd: REPO,
      env: childEnv({ AH_FIXTURE_REPORT_DIR: path.join(sandbox.root, 'reports'), AH_FIXTURE_RUN_ROOT: runRoot }),
      encoding: 'utf8',
      timeout: 180_000,
    });
    const output = `${result.stdout}\n${result.stderr}`;
    expect(result.status, output).toBe(0);
    const runs = fs.readdirSync(runRoot).filter((name) => name.includes('-codex-'));
    expect(runs).toHaveLength(1);
    const audit = path.join(runRoot, runs[0]!, '.audit');
    const atif = AtifTrajectorySchema.parse(JSON.parse(fs.readFileSync(path.join(audit, 'atif.1.json'), 'utf8')));
    expect(atif.steps.some((s) => s.tool_calls?.length)).toBe(true);
    const otlp = JSON.parse(fs.readFileSync(path.join(audit, 'otlp.1.json'), 'utf8')) as {
      resourceSpans: Array<{
        scopeSpans: Array<{
          spans: Array<{
            name: string;
            events?: Array<{ attributes: Array<{ key: string; value: { stringValue?: string } }> }>;
          }>;
        }>;
      }>;
    };
    const spans = otlp.resourceSpans.flatMap((r) => r.scopeSpans.flatMap((s) => s.spans));
    const agent = spans.find((s) => s.name === 'invoke_agent codex');
    const labels = (agent?.events ?? []).map(
      (e) => e.attributes.find((a) => a.key === 'gen_ai.evaluation.score.label')?.value.stringValue,
    );
    // The engine's verdict and the test's own.
    expect(labels).toEqual(['awaiting_input', 'passed']);
  });
});
