/** The agent matchers on hand-built AttemptResult-like objects (no engine). */
import { describe, expect, it } from 'vitest';
import type { ToolCallRecord } from '../../src/core/attempt-result.js';
import type { FcmpEvent } from '../../src/protocol/index.js';
import { installMatchers, transcript, type AgentOutcomeLike } from '../../src/vitest/matchers.js';
import { attemptRecord, countFcmp } from '../../src/vitest/run.js';

installMatchers();

let seq = 0;
function ev(type: FcmpEvent['type'], data: Record<string, unknown>): FcmpEvent {
  seq += 1;
  return {
    protocol_version: 'fcmp/1.0',
    run_id: 'r1',
    seq,
    ts: '2026-11-23T00:00:00.000Z',
    engine: 'codex',
    session_id: null,
    meta: { attempt: 1 },
    raw_ref: null,
    type,
    data,
  } as FcmpEvent;
}

function call(partial: Partial<ToolCallRecord>): ToolCallRecord {
  return {
    callId: 'c1',
    kind: 'shell',
    name: 'command_execution',
    input: { command: 'ls' },
    command: 'ls',
    status: 'completed',
    output: '',
    exitCode: 0,
    ...partial,
  };
}

const completed: AgentOutcomeLike = {
  completion: { state: 'completed', reason: 'done_marker' },
  fcmp: [
    ev('conversation.started', { launch: 'start' }),
    ev('assistant.message.final', { message_id: 'm1', text: 'Wrote x.txt.\n__SKILL_DONE__' }),
    ev('conversation.completed', { reason: 'done_marker' }),
  ],
  toolCalls: [
    call({ input: { command: 'printf hi > x.txt' } }),
    call({ callId: 'c2', input: { command: 'cat /run/.codex/skills/demo-hello/SKILL.md' } }),
    call({ callId: 'c3', kind: 'skill', name: 'Skill', input: { skill: 'other-skill' } }),
  ],
  fsDiff: { root: '/run', created: ['x.txt'], modified: ['y.txt'], deleted: ['z.txt'], engine_bookkeeping: [] },
  finalMessage: 'Wrote x.txt.\n__SKILL_DONE__',
  audit: { dir: '/runs/r1/.audit' },
};

const failed: AgentOutcomeLike = {
  completion: { state: 'failed', reason: 'model_error' },
  fcmp: [
    ev('conversation.started', { launch: 'start' }),
    ev('conversation.failed', { category: 'rate_limit', code: 'RATE_LIMITED', message: 'slow down' }),
  ],
  toolCalls: [],
  fsDiff: null,
  finalMessage: null,
  auditDir: '/runs/r2/.audit',
};

describe('agent matchers', () => {
  it('toHaveCompleted / toHaveFailedWith', () => {
    expect(completed).toHaveCompleted();
    expect(failed).not.toHaveCompleted();
    expect(failed).toHaveFailedWith('RATE_LIMITED');
    expect(failed).toHaveFailedWith('model_error');
    expect(failed).not.toHaveFailedWith('AUTH');
    expect(completed).not.toHaveFailedWith('done_marker');
  });

  it('toHaveCalledTool by name, kind, RegExp and predicate', () => {
    expect(completed).toHaveCalledTool('shell');
    expect(completed).toHaveCalledTool('command_execution');
    expect(completed).toHaveCalledTool(/^Sk/);
    expect(completed).toHaveCalledTool((c) => JSON.stringify(c.input).includes('x.txt'));
    expect(completed).not.toHaveCalledTool('web_search');
    expect(failed).not.toHaveCalledTool(/.*/);
  });

  it('toHaveUsedSkill via SKILL.md reads and skill tool calls', () => {
    expect(completed).toHaveUsedSkill('demo-hello');
    expect(completed).toHaveUsedSkill('other-skill');
    expect(completed).not.toHaveUsedSkill('hello');
  });

  it('a failing toHaveUsedSkill says which skills were injected and which the engine offered (docs/vitest.md)', () => {
    const offered = { ...completed, skillsInjected: ['demo-hello', 'hello'], skillsOffered: ['demo-hello'] };
    expect(() => expect(offered).toHaveUsedSkill('hello')).toThrow(
      /to have used skill hello; skills injected: demo-hello, hello; offered: demo-hello\n/,
    );
    expect(() => expect(completed).toHaveUsedSkill('hello')).toThrow(
      /offered: \(unknown: no model request was recorded\)/,
    );
  });

  it('toHaveChangedFiles / toHaveFinalMessage / toHaveFcmpSequence', () => {
    expect(completed).toHaveChangedFiles(['x.txt', './y.txt']);
    expect(completed).not.toHaveChangedFiles(['z.txt']);
    expect(completed).toHaveFinalMessage('Wrote x.txt.');
    expect(completed).toHaveFinalMessage(/x\.txt/);
    expect(failed).not.toHaveFinalMessage(/./);
    expect(completed).toHaveFcmpSequence(['conversation.started', 'conversation.completed']);
    expect(completed).not.toHaveFcmpSequence(['conversation.completed', 'conversation.started']);
  });

  it('toHaveChangedExactly / toHaveLeftUnchanged: exact, with engine bookkeeping apart', () => {
    const withBookkeeping = {
      ...completed,
      fsDiff: { ...completed.fsDiff!, engine_bookkeeping: ['.opencode/.gitignore'] },
    };
    expect(withBookkeeping).toHaveChangedExactly(['x.txt', 'y.txt', 'z.txt']);
    expect(completed).not.toHaveChangedExactly(['x.txt', 'y.txt']);
    expect(() => expect(withBookkeeping).toHaveChangedExactly(['x.txt'])).toThrow(
      /unexpected: y\.txt, z\.txt; engine bookkeeping \(ignored\): \.opencode\/\.gitignore/,
    );
    expect(completed).toHaveLeftUnchanged(['README.md', '.opencode/.gitignore']);
    expect(() => expect(completed).toHaveLeftUnchanged(['README.md', './y.txt'])).toThrow(
      /to have left y\.txt unchanged/,
    );
  });

  it('works as asymmetric matchers', () => {
    expect({ run: completed }).toEqual({ run: expect.toHaveCompleted() });
  });

  it('failure messages show the transcript and the audit directory', () => {
    expect(() => expect(failed).toHaveCompleted()).toThrow(
      /completion was failed \(model_error\)[\s\S]*conversation\.failed: \[RATE_LIMITED\] slow down[\s\S]*Audit: \/runs\/r2\/\.audit/,
    );
    expect(() => expect(completed).toHaveChangedFiles(['nope.txt'])).toThrow(
      /to have changed nope\.txt; changed: x\.txt, y\.txt[\s\S]*Audit: \/runs\/r1\/\.audit/,
    );
    expect(() => expect(completed).toHaveFcmpSequence(['conversation.failed'])).toThrow(
      /matched up to conversation\.failed/,
    );
    expect(transcript(completed)).toContain('assistant.message.final: Wrote x.txt. __SKILL_DONE__');
    expect(() => expect({}).toHaveCompleted()).toThrow(/HarnessRun or an AttemptResult/);
  });

  it('a long failure is shown whole: an empty cassette under a deep path keeps its re-record hint', async () => {
    const { RERECORD } = await import('../../src/cassette/recorder.js');
    const file = `/home/user/project/tests/integration/${'nested/'.repeat(12)}__cassettes__/agent.test.ts/writes a file.json`;
    const message = `The cassette is empty: ${file} has no recorded interaction to answer POST /v1/messages (model call at turn 0). ${RERECORD}`;
    const missed: AgentOutcomeLike = {
      ...failed,
      completion: { state: 'failed', reason: 'CASSETTE_MISS' },
      fcmp: [ev('conversation.failed', { category: 'model', code: 'CASSETTE_MISS', message })],
    };
    expect(() => expect(missed).toHaveCompleted()).toThrow(
      /Failure: CASSETTE_MISS \(category model\): The cassette is empty: [^\n]*writes a file\.json[^\n]*-u \(vitest -u\)/,
    );
  });
});

describe('attempt records', () => {
  it('counts FCMP types and builds a JSON-safe record', () => {
    expect(countFcmp(completed.fcmp)).toEqual({
      'conversation.started': 1,
      'assistant.message.final': 1,
      'conversation.completed': 1,
    });
    const record = attemptRecord(
      {
        runId: 'r1',
        attempt: 2,
        launch: 'resume',
        exitCode: 0,
        completion: completed.completion,
        conformance: { fcmp_counts: countFcmp(completed.fcmp), tool_call_count: completed.toolCalls!.length },
        usage: { input_tokens: 1 },
        durationMs: 10,
        audit: { dir: '/a' },
      } as never,
      1,
    );
    expect(record).toEqual({
      runId: 'r1',
      attempt: 2,
      launch: 'resume',
      exitCode: 0,
      completion: { state: 'completed', reason: 'done_marker' },
      fcmpCounts: { 'conversation.started': 1, 'assistant.message.final': 1, 'conversation.completed': 1 },
      auditDir: '/a',
      durationMs: 10,
      usage: { input_tokens: 1 },
      toolCalls: 3,
      retry: 1,
      engineVersion: null,
      engineVersionChecked: null,
    });
    expect(structuredClone(record)).toEqual(record);
  });
});
