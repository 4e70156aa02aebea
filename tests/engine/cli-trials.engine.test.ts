/**
 * `agent-harness start --trials N` on the real codex (the quickest engine; 4 attempts in all): each trial is its own
 * audited run, one line per trial with its outcome and run, then the statistics of src/evals/ — n, passes, the pass
 * rate with its Wilson 95% interval, the strip — and a failed trial names its classified cause.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { wilsonInterval } from '../../src/evals/stats.js';
import { createCliSandbox, runCliProcess, type CliSandbox } from '../helpers/cli.js';
import { missingReasons } from '../helpers/engines.js';
import { scaled } from '../helpers/load-scaled.js';

const missing = await missingReasons();
const sandboxes: CliSandbox[] = [];
afterEach(() => {
  for (const sandbox of sandboxes.splice(0)) sandbox.cleanup();
});

const percent = (x: number): string => `${(x * 100).toFixed(1)}%`;

/** The run directories the trial lines name, by trial number. */
function trialRuns(stdout: string): Map<number, { outcome: string; dir: string }> {
  const runs = new Map<number, { outcome: string; dir: string }>();
  for (const m of stdout.matchAll(/^trial (\d+)\/\d+ with-skill: (\w+).*; run \S+ (\S+)$/gm))
    runs.set(Number(m[1]), { outcome: m[2]!, dir: m[3]! });
  return runs;
}

describe.skipIf(Boolean(missing.codex))('start --trials on codex', () => {
  it('two passing trials: two runs with their audits, n=2, passed=2 and the Wilson interval', {
    timeout: scaled(300_000),
  }, () => {
    const sandbox = createCliSandbox();
    sandboxes.push(sandbox);
    const script = path.join(sandbox.root, 'script.json');
    fs.writeFileSync(
      script,
      JSON.stringify({
        version: 1,
        turns: [
          { type: 'shell', command: 'echo hi > hi.txt' },
          { type: 'final', text: 'Wrote hi.txt.' },
        ],
      }),
    );
    const run = runCliProcess(sandbox, [
      'start',
      '--trials',
      '2',
      '--concurrency',
      '2',
      '--script',
      script,
      '--prompt',
      'hi',
      'codex',
    ]);
    expect(run.status, run.stderr + run.stdout).toBe(0);
    const runs = trialRuns(run.stdout);
    expect([...runs.keys()].sort()).toEqual([1, 2]);
    expect(new Set([...runs.values()].map((r) => r.dir)).size).toBe(2);
    for (const { outcome, dir } of runs.values()) {
      expect(outcome).toBe('passed');
      expect(fs.readFileSync(path.join(dir, 'hi.txt'), 'utf8').trim()).toBe('hi');
      expect(fs.existsSync(path.join(dir, '.audit', 'fcmp.1.jsonl'))).toBe(true);
    }
    const ci = wilsonInterval(2, 2);
    expect(run.stdout).toContain(
      `Trials: hi on codex (with-skill): n=2, passed=2, pass rate 100.0%, 95% Wilson interval [${percent(ci.low)}, ${percent(ci.high)}], pass@1 100.0%\n`,
    );
    expect(run.stdout).toContain('apart from the rate: 0 infrastructure failure(s) (0 rerun), 0 engine failure(s)');
    expect(run.stdout).toContain('strip: PP');
  });

  it('a script that runs out: each trial failed with its cause (model, MODEL_SCRIPT_EXHAUSTED) and its run; exit 1', {
    timeout: scaled(300_000),
  }, () => {
    const sandbox = createCliSandbox();
    sandboxes.push(sandbox);
    const script = path.join(sandbox.root, 'short.json');
    fs.writeFileSync(script, JSON.stringify({ version: 1, turns: [{ type: 'shell', command: 'echo hi' }] }));
    const run = runCliProcess(sandbox, ['start', '--trials', '2', '--script', script, '--prompt', 'hi', 'codex']);
    expect(run.status, run.stderr + run.stdout).toBe(1);
    const runs = trialRuns(run.stdout);
    expect([...runs.keys()].sort()).toEqual([1, 2]);
    for (const { outcome, dir } of runs.values()) {
      expect(outcome).toBe('failed');
      expect(fs.existsSync(path.join(dir, '.audit'))).toBe(true);
    }
    expect(run.stdout.match(/^trial \d\/2 with-skill: failed \(model MODEL_SCRIPT_EXHAUSTED: /gm)).toHaveLength(2);
    const ci = wilsonInterval(0, 2);
    expect(run.stdout).toContain(
      `n=2, passed=0, pass rate 0.0%, 95% Wilson interval [${percent(ci.low)}, ${percent(ci.high)}]`,
    );
    expect(run.stdout).toContain('strip: FF');
  });
});
