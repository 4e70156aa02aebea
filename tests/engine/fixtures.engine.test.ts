/**
 * The Vitest fixtures with the real codex CLI: `model.script(...)`, `agent.start('codex', …)`, the agent
 * matchers, `run.resume(...)` and the `task.meta.agentHarness` record the reporter reads. The root config does
 * not use the plugin, so the fixtures run with their defaults (cwd paths, a temporary run root).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, describe, expect, inject } from 'vitest';
import {
  test,
  turns,
  readAgentHarnessMeta,
  defaultAgentHarnessConfig,
  type AgentHarnessTaskMeta,
} from '../../src/public/vitest.js';
import type { AgentHarnessConfig } from '../../src/vitest/options.js';
import { engineMissingReason } from '../helpers/engines.js';
import { startKeyedVendor } from '../helpers/keyed-vendor.js';
import { resolveHarnessPaths } from '../../src/runtime/paths.js';
import { scaled } from '../helpers/load-scaled.js';

const SKILLS = path.join('fixtures', 'skills');
const recorded = new Map<string, AgentHarnessTaskMeta | undefined>();

afterEach(({ task }) => {
  recorded.set(task.name, readAgentHarnessMeta(task.meta));
});

describe('fixtures with codex', () => {
  test('start, tool call, file change, final message, resume', async ({ model, agent, harness, task }) => {
    // Without the plugin the fixtures fall back to their defaults; with it, harness.config is the provided one.
    expect(harness.config).toEqual(inject('agentHarness') ?? harness.config);
    expect(harness.config.model).toBe('scripted');
    model.script(
      turns.shell("printf 'x\\n' > x.txt"),
      turns.final('done'),
      turns.shell("printf 'more\\n' >> x.txt"),
      turns.final('done again'),
    );
    const run = await agent.start('codex', { prompt: 'Use the demo-hello skill and write x.txt.', skills: [SKILLS] });
    expect(run.error).toBeNull();
    expect(run).toHaveCompleted();
    expect(run).toHaveCalledTool('shell');
    expect(run).toHaveCalledTool((call) => JSON.stringify(call.input).includes('x.txt'));
    expect(run).toHaveChangedFiles(['x.txt']);
    expect(run).toHaveFinalMessage(/done/);
    expect(run).toHaveFinalMessage('done');
    expect(run).toHaveFcmpSequence(['conversation.started', 'assistant.message.final', 'conversation.completed']);
    expect(run.sessionId).toMatch(/^[0-9a-f-]{36}$/);
    expect(run.runDir.startsWith(harness.paths.runRoot)).toBe(true);
    expect(fs.readFileSync(path.join(run.runDir, 'x.txt'), 'utf8')).toBe('x\n');
    expect(model.requests.some((r) => r.wire === 'openai-responses')).toBe(true);
    expect(JSON.stringify(model.requests.find((r) => r.wire === 'openai-responses')?.body)).toContain('demo-hello');
    expect(model.egress).toEqual([]);
    // The meta is written as attempts finish (and again in the fixture's teardown).
    expect(readAgentHarnessMeta(task.meta)).toMatchObject({
      engine: 'codex',
      runId: run.runId,
      handle: run.handle,
      attempts: [{ attempt: 1, launch: 'start' }],
    });

    await run.resume('Append another line.');
    expect(run.attempts).toHaveLength(2);
    expect(run.sessionId).toBe(run.attempts[0]!.sessionId);
    expect(run).toHaveCompleted();
    expect(run).toHaveFinalMessage(/done again/);
    expect(run.fsDiff?.modified).toContain('x.txt');
    expect(run).toHaveChangedFiles(['x.txt']);
    expect(run).toHaveFcmpSequence(['conversation.started', 'user.input.replied', 'conversation.completed']);
    expect(fs.readFileSync(path.join(run.runDir, 'x.txt'), 'utf8')).toBe('x\nmore\n');
  });

  test('the reporter record was written for the previous test', async ({ skip }) => {
    // The previous test skips where codex cannot run (or AGENT_HARNESS_ENGINES leaves it out): no record then.
    const missing = await engineMissingReason('codex');
    if (missing) skip(missing);
    const meta = recorded.get('start, tool call, file change, final message, resume');
    expect(meta).toBeDefined();
    expect(meta!.engine).toBe('codex');
    expect(meta!.attempts.map((a) => [a.attempt, a.launch, a.completion.state, a.retry])).toEqual([
      [1, 'start', 'completed', 0],
      [2, 'resume', 'completed', 0],
    ]);
    for (const attempt of meta!.attempts) {
      expect(attempt.runId).toBe(meta!.runId);
      expect(attempt.exitCode).toBe(0);
      expect(attempt.fcmpCounts['conversation.completed']).toBe(1);
      expect(attempt.toolCalls).toBe(1);
      expect(fs.existsSync(attempt.auditDir)).toBe(true);
      expect(attempt.durationMs).toBeGreaterThan(0);
    }
    expect(structuredClone(meta)).toEqual(meta);
  });

  test('a failing model turn is reported with toHaveFailedWith', async ({ model, agent }) => {
    model.script(turns.error(500, 'scripted upstream failure'));
    const run = await agent.start('codex', { prompt: 'hi', timeoutMs: scaled(120_000) });
    expect(run).not.toHaveCompleted();
    expect(run.completion.state).toBe('failed');
    const failure = run.fcmp.find((e) => e.type === 'conversation.failed');
    expect(failure).toBeDefined();
    expect(run).toHaveFailedWith((failure!.data as { code: string }).code);
  });
});

describe('attempts at once in one test', () => {
  test('two agent.starts with their own scripts never cross: each its own lane, turns and request log', async ({
    model,
    agent,
  }) => {
    model.script(turns.final('The test script: never served.'));
    const script = (name: string) => [
      turns.shell(`printf '${name}\\n' > ${name}.txt`),
      turns.final(`Wrote ${name}.txt.`),
    ];
    const [a, b] = await Promise.all([
      agent.start('codex', { prompt: 'Write a.txt', script: script('a') }),
      agent.start('codex', { prompt: 'Write b.txt', script: script('b') }),
    ]);
    for (const [run, name, other] of [
      [a, 'a', 'b'],
      [b, 'b', 'a'],
    ] as const) {
      expect(run).toHaveCompleted();
      expect(run).toHaveChangedFiles([`${name}.txt`]);
      expect(run).toHaveFinalMessage(`Wrote ${name}.txt.`);
      expect(fs.readFileSync(path.join(run.runDir, `${name}.txt`), 'utf8')).toBe(`${name}\n`);
      // The attempt's request log holds its own requests only.
      const log = fs.readFileSync(run.audit.modelRequests, 'utf8');
      expect(log).toContain(`Write ${name}.txt`);
      expect(log).not.toContain(`Write ${other}.txt`);
    }
    // Both lanes' requests are the test's too.
    expect(model.requests.filter((r) => r.lane !== undefined).length).toBeGreaterThanOrEqual(4);
  });
});

describe('a cassette forked from the fixtures', () => {
  const KEY = 'sk-test-SECRET-fixtures-fork-5e6f7a8b';
  const config: AgentHarnessConfig = { ...defaultAgentHarnessConfig() };
  const tapes = fs.mkdtempSync(path.join(os.tmpdir(), 'ah-fixtures-fork-'));
  test.override({
    harness: {
      config,
      paths: resolveHarnessPaths({ runRoot: config.runRoot! }),
      hostEnv: { ...process.env, OPENAI_API_KEY: KEY },
    },
  });
  afterAll(() => fs.rmSync(tapes, { recursive: true, force: true }));

  test('agent.start records, then forks at 1 onto the test script and onto the live vendor', async ({
    model,
    agent,
  }) => {
    const cassette = path.join(tapes, 'c.json');
    const output = path.join(tapes, 'forked.json');
    const recorder = await startKeyedVendor(KEY, {
      version: 1,
      turns: [turns.writeFile('a.txt', 'from the vendor\n'), turns.final('Wrote a.txt.')],
    });
    try {
      config.upstream = recorder.url;
      const recorded = await agent.start('codex', { prompt: 'Write a.txt', model: 'record', cassette });
      expect(recorded).toHaveCompleted();
    } finally {
      await recorder.close();
    }
    model.script(turns.final('never served'), turns.final('Scripted ending.'));
    const scripted = await agent.start('codex', { prompt: 'Write a.txt', model: 'replay', cassette, fork: { at: 1 } });
    expect(scripted).toHaveCompleted();
    expect(scripted).toHaveFinalMessage('Scripted ending.');
    expect(fs.readFileSync(path.join(scripted.runDir, 'a.txt'), 'utf8')).toBe('from the vendor\n');

    const live = await startKeyedVendor(KEY, {
      version: 1,
      turns: [turns.writeFile('a.txt', 'never served\n'), turns.final('Live ending.')],
    });
    try {
      config.upstream = live.url;
      const forked = await agent.start('codex', {
        prompt: 'Write a.txt',
        model: 'replay',
        cassette,
        fork: { at: 1, to: 'live', cassette: output },
      });
      expect(forked).toHaveCompleted();
      expect(forked).toHaveFinalMessage('Live ending.');
      expect(fs.readFileSync(path.join(forked.runDir, 'a.txt'), 'utf8')).toBe('from the vendor\n');
      expect(live.accepted).toBeGreaterThanOrEqual(1);
    } finally {
      await live.close();
    }
    expect(fs.readFileSync(output, 'utf8')).toContain('Live ending.');
    expect(fs.readFileSync(output, 'utf8')).not.toContain(KEY);
  });
});

describe('replay without a cassette', () => {
  const config = { ...defaultAgentHarnessConfig(), model: 'replay' as const };
  test.override({
    harness: { config, paths: resolveHarnessPaths({ runRoot: config.runRoot! }), hostEnv: process.env },
  });

  test('is refused with CASSETTE_NOT_FOUND (naming the cassette path) before anything starts', async ({ agent }) => {
    await expect(agent.start('codex', { prompt: 'hi' })).rejects.toMatchObject({
      code: 'CASSETTE_NOT_FOUND',
      message: expect.stringContaining('__cassettes__'),
    });
    expect(agent.runs).toHaveLength(0);
  });
});
