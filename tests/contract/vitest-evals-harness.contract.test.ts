/**
 * The vitest-evals harness adapter (src/evals/vitest-evals.ts), driven by a `describeEval`-shaped caller written here
 * (the real one is exercised in tests/engine/vitest-evals.engine.test.ts; its 0.16.1 `describeEval` hands each `run(input)` to `harness.run(input,
 * { signal, artifacts, setArtifact })` and gives the test the `HarnessRun`). A fake codex replaying a golden stream
 * that writes a file runs through the real attempt path; the run comes back with vitest-evals' shape: the prompt,
 * the tool call and its result, the answer, usage, no errors, and the run's audit as artifacts.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { type EvalHarness, type EvalHarnessRun, vitestEvalsHarness } from '../../src/evals/vitest-evals.js';
import { resolveHarnessPaths } from '../../src/runtime/paths.js';
import { createCliSandbox, installFakeEngine, REPO } from '../helpers/cli.js';
import { scaled } from '../helpers/load-scaled.js';

const sandbox = createCliSandbox();
afterAll(() => sandbox.cleanup());

/** What vitest-evals' `describeEval(name, { harness }, (it) => …)` does for one `run(input)`. */
async function describeEvalRun<T>(harness: EvalHarness<T>, input: T) {
  const artifacts: Record<string, unknown> = {};
  const run: EvalHarnessRun = await harness.run(input, {
    signal: new AbortController().signal,
    artifacts: artifacts as never,
    setArtifact: (name, value) => {
      artifacts[name] = value;
    },
  });
  return { run, artifacts };
}

it('runs the engine through agent-harness and returns the normalized run vitest-evals reads', {
  timeout: scaled(120_000),
}, async () => {
  installFakeEngine(sandbox, 'codex', {
    stdoutFile: path.join(REPO, 'fixtures', 'streams', 'codex', 'file-change.stdout.jsonl'),
  });
  const harness = vitestEvalsHarness({
    engine: 'codex',
    paths: resolveHarnessPaths({ env: { ...process.env, ...sandbox.env }, projectRoot: sandbox.root }),
  });
  expect(harness.name).toBe('agent-harness:codex');
  const { run, artifacts } = await describeEvalRun(harness, 'Write greeting.txt.');
  expect(run.errors).toEqual([]);
  expect(run.session.events[0]).toEqual({ type: 'message', role: 'user', content: 'Write greeting.txt.' });
  const calls = run.session.events.filter((e) => e.type === 'tool_call');
  expect(calls.length).toBeGreaterThan(0);
  for (const call of calls) expect(call).toMatchObject({ id: expect.any(String), name: expect.any(String) });
  const answers = run.session.events.flatMap((e) =>
    e.type === 'message' && e.role === 'assistant' ? [e.content] : [],
  );
  expect(answers.length).toBeGreaterThan(0);
  expect(run.output).toBe(answers.at(-1));
  expect(run.usage).toMatchObject({ provider: 'codex', toolCalls: calls.length });
  expect(artifacts.handle).toBe(run.artifacts!.handle);
  expect(fs.existsSync(path.join(String(artifacts.auditDir), 'fcmp.1.jsonl'))).toBe(true);
  // Plain JSON: vitest-evals' reporter serializes the run.
  expect(JSON.parse(JSON.stringify(run))).toEqual(run);
});
