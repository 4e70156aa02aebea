/**
 * The plugin's live progress and per-test export: a child Vitest runs fixtures/vitest-export-project (plugin with
 * `export: { atif: true, otlp: true }`), whose test starts codex — a fake executable in the managed prefix that prints
 * the first events of a golden stream and waits for a release file before the rest, no engine. The reporter prints
 * the running attempt's progress (CI, with a short AGENT_HARNESS_PROGRESS_INTERVAL_MS); once seen, the test releases
 * the engine; at the end the reporter writes atif.1.json and otlp.1.json beside the attempt's audit.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { AtifTrajectorySchema } from '../../src/export/atif-schema.js';
import { VITEST, childVitestEnv } from '../helpers/child-vitest.js';
import { REPO, useGatedCodexSandbox } from '../helpers/cli.js';

const PROJECT = path.join('fixtures', 'vitest-export-project');
const gated = useGatedCodexSandbox();

describe('agentHarness() progress and export', () => {
  it('prints the running attempt, then writes ATIF and OTLP beside each attempt of each test', async () => {
    const runRoot = path.join(gated.sandbox.root, 'runs');
    const child = spawn(process.execPath, [VITEST, 'run', '--root', PROJECT], {
      cwd: REPO,
      env: childVitestEnv({
        ...gated.sandbox.env,
        PATH: process.env.PATH,
        AH_FIXTURE_REPORT_DIR: path.join(gated.sandbox.root, 'reports'),
        AH_FIXTURE_RUN_ROOT: runRoot,
        AGENT_HARNESS_PROGRESS_INTERVAL_MS: '50',
      }),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    const progress = /agent-harness: progress: codex · codex writes out\.txt · turn 1 · 1 tool call · \d+s/;
    const onData = (chunk: Buffer): void => {
      output += chunk.toString();
      if (progress.test(output) && !fs.existsSync(gated.release)) fs.writeFileSync(gated.release, '');
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    const status = await new Promise<number | null>((resolve) => child.on('close', resolve));
    expect(status, output).toBe(0);
    expect(output).toMatch(progress);
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
