/**
 * The LLM judge (issue 45 item 4) against our own model server on 127.0.0.1 with a scripted reply, through the
 * orchestrator's real callers (OpenAI Chat, Anthropic Messages): its grade, its failures (JUDGE_FAILED, counted apart
 * by gradeTrial), a missing caller (CONFIG_INVALID naming it), and a judge cassette recorded once and replayed with no
 * upstream at all, giving the same grade.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { gradeTrial } from '../../src/evals/grade-trial.js';
import { completed } from '../../src/evals/graders/checks.js';
import type { AgentOutcomeLike } from '../../src/evals/graders/outcome.js';
import { openJudgeCassette } from '../../src/evals/judge-cassette.js';
import { JUDGE_SYSTEM_PROMPT, llmJudge, parseJudgeAnswer } from '../../src/evals/judge.js';
import { startModelServer } from '../../src/engines/model-server.js';
import { turns, type ModelServer } from '../../src/model/index.js';
import { createAnthropicMessagesCaller, createOpenAiChatCaller } from '../../src/orchestrator/index.js';
import type { FcmpEvent } from '../../src/protocol/index.js';

const servers: ModelServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

async function server(...script: Parameters<typeof turns.text>[0][]): Promise<ModelServer> {
  const s = await startModelServer({ script: { version: 1, turns: script.map((t) => turns.text(t)) } });
  servers.push(s);
  return s;
}

const fcmp = [
  { type: 'tool.call', data: { kind: 'shell', name: 'Bash', command: 'printf hi > greeting.txt' } },
  { type: 'tool.result', data: { status: 'completed', exit_code: 0, output_excerpt: '' } },
  { type: 'assistant.message.final', data: { text: 'Wrote greeting.txt.' } },
  { type: 'conversation.completed', data: { reason: 'done_marker' } },
] as unknown as FcmpEvent[];

function outcome(): AgentOutcomeLike {
  const runDir = fs.mkdtempSync(path.join(os.tmpdir(), 'judge-'));
  fs.writeFileSync(path.join(runDir, 'greeting.txt'), 'hi from the agent\n');
  return { completion: { state: 'completed', reason: 'done_marker' }, fcmp, runDir };
}

const rubric = 'The agent wrote greeting.txt with a greeting.';

describe('llmJudge', () => {
  it('grades the transcript and files through the OpenAI Chat and Anthropic callers', async () => {
    const s = await server(
      '{"score": 0.75, "reason": "greeting written, but terse"}',
      'Verdict: {"score":1,"reason":"ok {fine}"}',
    );
    const chat = llmJudge({
      caller: createOpenAiChatCaller({ baseURL: `${s.url}/v1`, apiKey: 'k' }),
      model: 'judge-model',
      rubric,
      files: ['greeting.txt', 'missing.txt'],
    });
    const graded = await gradeTrial(outcome(), [chat, completed()], { threshold: 0.8 });
    expect(graded.grades[0]).toEqual({ name: 'judge', score: 0.75, reason: 'greeting written, but terse' });
    expect(graded.score).toBeCloseTo((0.75 + 1) / 2);
    expect(graded.passed).toBe(true);
    // What the judge was shown: the system prompt, the rubric, the FCMP transcript and the files.
    const body = s.requests[0]!.body as { model: string; messages: Array<{ role: string; content: string }> };
    expect(body.model).toBe('judge-model');
    expect(body.messages[0]!.content).toBe(JUDGE_SYSTEM_PROMPT);
    const prompt = body.messages[1]!.content;
    expect(prompt).toContain(rubric);
    expect(prompt).toContain('tool call shell Bash: printf hi > greeting.txt');
    expect(prompt).toContain('--- file greeting.txt ---\nhi from the agent');
    expect(prompt).toContain('--- file missing.txt ---\n(missing');

    const s2 = await server('Verdict: {"score":1,"reason":"ok {fine}"}');
    const messages = llmJudge({
      caller: createAnthropicMessagesCaller({ baseURL: s2.url, apiKey: 'k' }),
      model: 'claude-judge',
      rubric,
      name: 'judge:greeting',
    });
    expect(await messages.grade(outcome())).toEqual({ name: 'judge:greeting', score: 1, reason: 'ok {fine}' });
    expect(s2.requests[0]!.path).toBe('/v1/messages');
  });

  it('a judge that cannot grade is a JUDGE_FAILED grade error, never a pass or a fail', async () => {
    const s = await server('I think it is fine.');
    const unparsable = llmJudge({
      caller: createOpenAiChatCaller({ baseURL: `${s.url}/v1`, apiKey: 'k' }),
      model: 'm',
      rubric,
    });
    const graded = await gradeTrial(outcome(), [completed(), unparsable], { threshold: 0 });
    expect(graded.passed).toBe(false);
    expect(graded.grades.map((g) => g.name)).toEqual(['toHaveCompleted']);
    expect(graded.errors).toEqual([
      { name: 'judge', code: 'JUDGE_FAILED', message: expect.stringContaining('I think it is fine.') },
    ]);

    // The caller fails: a scripted 500 (no retries), then a closed port.
    const failing = await startModelServer({ script: { version: 1, turns: [turns.error(500, 'judge down')] } });
    servers.push(failing);
    const down = llmJudge({
      caller: createOpenAiChatCaller({ baseURL: `${failing.url}/v1`, apiKey: 'k', retry: { maxRetries: 0 } }),
      model: 'm',
      rubric,
    });
    await expect(down.grade(outcome())).rejects.toMatchObject({
      code: 'JUDGE_FAILED',
      message: expect.stringContaining('caller failed'),
    });
    const scoreOutOfRange = parseJudgeAnswer('{"score": 7}');
    expect(scoreOutOfRange).toBeNull();
  });

  it('a judge without a caller, rubric or model is CONFIG_INVALID naming the option', () => {
    expect(() => llmJudge({ rubric } as never)).toThrow(
      expect.objectContaining({ code: 'CONFIG_INVALID', message: expect.stringContaining('caller is required') }),
    );
    const caller = createOpenAiChatCaller({ baseURL: 'http://127.0.0.1:9/v1', apiKey: 'k' });
    expect(() => llmJudge({ caller, model: 'm', rubric: ' ' })).toThrow(/rubric must be/);
    expect(() => llmJudge({ caller, rubric })).toThrow(/model is required/);
  });

  it('records its calls in a cassette, and a replay with no upstream re-judges identically', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'judge-cassette-'));
    const file = path.join(dir, 'trial.judge.json');
    const upstream = await server('{"score": 0.4, "reason": "the greeting is wrong"}');
    const hostEnv = { OPENAI_API_KEY: 'sk-judge-secret-123' };
    const judgeAt = (url: string) =>
      llmJudge({
        caller: createOpenAiChatCaller({ baseURL: `${url}/v1`, apiKey: 'sk-judge-secret-123' }),
        model: 'm',
        rubric,
      });

    const recording = await openJudgeCassette({ mode: 'record', file, upstream: upstream.url, hostEnv });
    const recorded = await gradeTrial(outcome(), [judgeAt(recording.url)], { threshold: 0.5 });
    const report = await recording.finish();
    expect(report.interactions).toBe(1);
    expect(fs.readFileSync(file, 'utf8')).not.toContain('sk-judge-secret-123');
    await upstream.close();

    const replaying = await openJudgeCassette({ mode: 'replay', file });
    const replayed = await gradeTrial(outcome(), [judgeAt(replaying.url)], { threshold: 0.5 });
    await replaying.finish();
    expect(replayed).toEqual(recorded);
    expect(replayed.grades[0]).toMatchObject({ score: 0.4, reason: 'the greeting is wrong' });
    expect(replayed.passed).toBe(false);
    expect(upstream.requests).toHaveLength(1);

    // A replay asked something else (another rubric) misses: the judge fails, it does not grade from nowhere.
    const again = await openJudgeCassette({ mode: 'replay', file });
    const other = llmJudge({
      caller: createOpenAiChatCaller({ baseURL: `${again.url}/v1`, apiKey: 'k', retry: { maxRetries: 0 } }),
      model: 'm',
      rubric: 'Something else.',
    });
    await expect(other.grade(outcome())).rejects.toMatchObject({ code: 'JUDGE_FAILED' });
    await expect(again.finish()).rejects.toMatchObject({ code: expect.stringMatching(/^CASSETTE_/) });
  });
});
