/**
 * The vitest-evals adapter (src/evals/vitest-evals.ts) under the real vitest-evals 0.16.1 `describeEval` (a dev
 * dependency here; agent-harness itself neither imports nor depends on it): the real codex CLI runs contained against
 * the scripted model for each `run(input)`, and vitest-evals' own helpers read the normalized run — the tool call
 * and its result, the answer — while the run's audit is there as artifacts.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, expect } from 'vitest';
import { describeEval, toolCalls } from 'vitest-evals';
import { vitestEvalsHarness } from '../../src/evals/vitest-evals.js';
import { turns } from '../../src/model/index.js';
import { resolveHarnessPaths } from '../../src/runtime/paths.js';
import { scaled } from '../helpers/load-scaled.js';

const root = fs.mkdtempSync(path.join(os.tmpdir(), 'ah-vitest-evals-'));
afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

const harness = vitestEvalsHarness({
  engine: 'codex',
  paths: resolveHarnessPaths({ env: process.env, projectRoot: root }),
  request: {
    script: {
      version: 1,
      turns: [turns.shell("printf 'hello\\n' > greeting.txt"), turns.final('Wrote greeting.txt.')],
    },
    timeoutMs: scaled(120_000),
  },
});

describeEval('agent-harness under vitest-evals', { harness }, (it) => {
  it('runs codex and hands vitest-evals its tool calls, answer and audit', { timeout: scaled(180_000) }, async ({
    run,
  }) => {
    const result = await run('Write greeting.txt.');
    expect(result.errors).toEqual([]);
    expect(result.output).toContain('Wrote greeting.txt.');
    const calls = toolCalls(result);
    expect(calls).toHaveLength(1);
    expect(JSON.stringify(calls[0]?.arguments)).toContain('greeting.txt');
    const auditDir = String(result.artifacts?.auditDir);
    expect(fs.existsSync(path.join(auditDir, 'fcmp.1.jsonl'))).toBe(true);
    expect(fs.readFileSync(path.join(auditDir, '..', 'greeting.txt'), 'utf8')).toBe('hello\n');
  });
});
