/**
 * claude `-p --output-format stream-json --verbose` parser: what only it does, on the research samples (turn1,
 * turn2-resume), streams recorded from the real claude 2.1.197 against the scripted model through the
 * harness (recorded-turn1, recorded-turn2-resume, error-401/429/500, bash-failed, thinking), derived edge
 * cases (truncated, noise) and hand-written ones (tool-kinds, result-error-during-execution,
 * result-max-turns), through `translateRecorded` (line splitter → RASP builder → FCMP, as a live attempt).
 * Their goldens and the error table are rows of engine-goldens.contract.test.ts.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { claudeEngine } from '../../src/engines/claude/index.js';
import { claudeToolKind, createClaudeParser } from '../../src/engines/claude/parse.js';
import type { ParserOutput } from '../../src/engines/engine.js';
import { DiagnosticSchema, ParsedEventSchema } from '../../src/protocol/index.js';
import { translateRecorded } from '../../src/translate/recorded.js';

const STREAMS = path.resolve(import.meta.dirname, '..', '..', 'fixtures', 'streams', 'claude');
function recorded(name: string) {
  return translateRecorded(
    claudeEngine,
    { stdout: fs.readFileSync(path.join(STREAMS, `${name}.stdout.jsonl`)) },
    { runId: 'golden' },
  );
}

function lines(name: string): string[] {
  return fs
    .readFileSync(path.join(STREAMS, `${name}.stdout.jsonl`), 'utf8')
    .split('\n')
    .filter(Boolean);
}

function parseAll(input: readonly string[]): ParserOutput[] {
  const parser = createClaudeParser();
  return [...input.flatMap((line) => parser.line('stdout', line)), ...parser.end()];
}

function expectValid(outputs: ParserOutput[]): void {
  for (const output of outputs) {
    if (output.type === 'diagnostic') expect(DiagnosticSchema.safeParse(output.diagnostic).success).toBe(true);
    else expect(ParsedEventSchema.safeParse(output).success, JSON.stringify(output)).toBe(true);
  }
}

const codes = (outputs: ParserOutput[]): string[] =>
  outputs.flatMap((o) => (o.type === 'diagnostic' ? [o.diagnostic.code] : []));

describe('claude parser goldens', () => {
  it('turn1 sample: session, turn, offered skills, Bash call and result, final text, usage, turn end — in that order', () => {
    const outputs = parseAll(lines('turn1'));
    expectValid(outputs);
    expect(outputs).toEqual([
      { type: 'engine.session', session_id: '24d416a0-7cd2-46a2-8a7a-49e5845da6f6' },
      { type: 'engine.turn.started' },
      {
        type: 'engine.skills.offered',
        skills: expect.arrayContaining(['feas-proj-skill', 'code-review']),
        source: 'engine',
      },
      {
        type: 'engine.tool.call',
        call_id: 'toolu_c9394128c46f5fe88ddc0029',
        kind: 'shell',
        name: 'Bash',
        input: { command: 'echo hello > out.txt', description: 'Run scripted command' },
      },
      {
        type: 'engine.tool.result',
        call_id: 'toolu_c9394128c46f5fe88ddc0029',
        status: 'completed',
        output: '(Bash completed with no output)',
        exit_code: 0,
      },
      { type: 'engine.assistant.message', message_id: 'msg_5bd6343b37095cb6#0', text: 'DONE', final: true },
      {
        type: 'engine.usage',
        usage: { input_tokens: 20, cached_input_tokens: 0, output_tokens: 10, reasoning_output_tokens: null },
      },
      { type: 'engine.turn.end', status: 'completed', error: null },
    ]);
  });

  it('--output-format json: the single result object gives the session, the final message and the verdict', () => {
    const ok = recorded('json-result');
    expect(ok.summary).toMatchObject({
      session_id: '5f3c2b8e-1d4a-4c9e-9a51-0c1f2e3d4b5a',
      final_message: 'The answer is 4.',
      completed: true,
      error: null,
    });
    // A finished turn without the done marker waits for the user, as in stream-json mode.
    expect(ok.judgement.state).toBe('awaiting_input');
    expect(ok.fcmp.filter((e) => e.type === 'assistant.message.final').map((e) => e.data)).toEqual([
      { message_id: 'result:5f3c2b8e-1d4a-4c9e-9a51-0c1f2e3d4b5a', text: 'The answer is 4.' },
    ]);
    const captured = recorded('captured-json-result');
    expect(captured.summary).toMatchObject({
      session_id: 'b32d7922-ca51-43eb-83a1-69fd735c7635',
      final_message: 'Hello from the agent-harness scripted model.',
      error: null,
    });
    expect(captured.rasp.find((e) => e.data.type === 'engine.usage')?.data).toMatchObject({
      usage: { input_tokens: 10, output_tokens: 5 },
    });
    const bad = recorded('json-result-error');
    expect(bad.summary.session_id).toBe('7a6b5c4d-3e2f-4a1b-8c9d-0e1f2a3b4c5d');
    expect(bad.judgement).toMatchObject({ state: 'failed', failure: { category: 'auth', code: 'ENGINE_AUTH_FAILED' } });
    // An error text is the failure's message, not an assistant answer.
    expect(bad.fcmp.some((e) => e.type === 'assistant.message.final')).toBe(false);
  });

  it.each(['prompt-too-long', 'json-prompt-too-long'])(
    '%s: context exhausted fails the turn, the text is the final message',
    (name) => {
      const result = recorded(name);
      expect(result.judgement).toMatchObject({
        state: 'failed',
        failure: { category: 'context_length', code: 'ENGINE_CONTEXT_LENGTH_EXCEEDED', message: 'Prompt is too long' },
      });
      expect(result.summary.final_message).toBe('Prompt is too long');
      expect(result.fcmp.filter((e) => e.type === 'assistant.message.final')).toHaveLength(1);
      expect(result.fcmp.some((e) => e.type === 'conversation.completed')).toBe(false);
    },
  );

  it('recorded turns: completed with the done marker, then the resume keeps the session and awaits input', () => {
    const first = recorded('recorded-turn1');
    expect(first.summary).toMatchObject({
      tool_calls: 1,
      completed: true,
      error: null,
      final_message: 'Wrote hello.txt.\n__SKILL_DONE__',
      diagnostics: [],
    });
    expect(first.judgement.state).toBe('completed');
    const second = recorded('recorded-turn2-resume');
    expect(second.summary.session_id).toBe(first.summary.session_id);
    expect(second.judgement.state).toBe('awaiting_input');
    expect(recorded('turn2-resume').summary.session_id).toBe(recorded('turn1').summary.session_id);
  });

  it('API errors: the synthetic error message is an engine error, the is_error result fails the turn, categorized', () => {
    expect(recorded('error-401').judgement).toMatchObject({
      state: 'failed',
      failure: { category: 'auth', code: 'ENGINE_AUTH_FAILED' },
    });
    expect(recorded('error-429').judgement).toMatchObject({ state: 'failed', failure: { category: 'rate_limit' } });
    const e500 = recorded('error-500');
    expect(e500.judgement.state).toBe('failed');
    expect(e500.summary.error).toContain('API Error: 500 scripted upstream failure');
    const outputs = parseAll(lines('error-500'));
    expect(outputs.filter((o) => o.type === 'engine.assistant.message')).toEqual([]);
    expect(outputs).toContainEqual(expect.objectContaining({ type: 'engine.error', fatal: false }));
  });

  it("claude's older --output-format json (May 2025): an array of role messages gives the same story", () => {
    const result = recorded('json-array-legacy');
    expect(result.summary).toMatchObject({
      session_id: '3c1d9e2a-5b7f-4e1a-9c2d-8f6e5a4b3c21',
      tool_calls: 1,
      final_message: 'You are in /home/user/project.',
      diagnostics: [],
      error: null,
    });
    expect(parseAll(lines('json-array-legacy'))).toContainEqual(
      expect.objectContaining({ type: 'engine.tool.result', call_id: 'toolu_01legacy', status: 'completed' }),
    );
    expect(result.judgement.state).toBe('awaiting_input');
    // The text comes once (from the assistant message, not again from the closing summary).
    expect(result.fcmp.filter((e) => e.type === 'assistant.message.final')).toHaveLength(1);
  });

  it.each([
    ['oauth-expired', 'auth', 'ENGINE_AUTH_FAILED', 'OAuth token has expired'],
    ['credit-too-low', 'auth', 'ENGINE_BILLING_FAILED', 'Credit balance is too low'],
    // claude 2.1.332 (the drift command's newest release) on a scripted `malformed` body.
    ['malformed-2.1.332', 'protocol', 'ENGINE_PROTOCOL_ERROR', 'empty or malformed response'],
  ])('%s: the error text is the failure, with its code, never an answer', (name, category, code, text) => {
    const result = recorded(name);
    expect(result.judgement).toMatchObject({ state: 'failed', failure: { category, code } });
    expect(result.summary.error).toContain(text);
    expect(result.fcmp.some((e) => e.type === 'assistant.message.final')).toBe(false);
  });

  it('a Bash command of a few seconds: its task_started and task_notification add no diagnostic', () => {
    const raw = lines('long-bash-task');
    // The capture holds both task events (claude 2.1.197, `sleep 6` through the scripted model).
    expect(raw.map((line) => (JSON.parse(line) as { subtype?: string }).subtype)).toEqual(
      expect.arrayContaining(['task_started', 'task_notification']),
    );
    const outputs = parseAll(raw);
    expect(codes(outputs)).toEqual([]);
    expect(outputs).toContainEqual(expect.objectContaining({ type: 'engine.tool.result', status: 'completed' }));
    const result = recorded('long-bash-task');
    expect(result.summary).toMatchObject({ tool_calls: 1, diagnostics: [], error: null });
    expect(result.judgement.state).toBe('completed');
    // A subtype claude has never shown is still reported.
    expect(codes(parseAll(['{"type":"system","subtype":"task_brand_new"}']))).toEqual(['CLAUDE_UNKNOWN_EVENT']);
  });

  it('a failed Bash call has status failed and the exit code from "Exit code N"', () => {
    const outputs = parseAll(lines('bash-failed'));
    expect(outputs).toContainEqual(
      expect.objectContaining({ type: 'engine.tool.result', status: 'failed', exit_code: 2 }),
    );
    expect(recorded('bash-failed').judgement.state).toBe('awaiting_input');
  });

  it('thinking blocks become reasoning; blocks sharing a message id get distinct ids', () => {
    const outputs = parseAll(lines('thinking'));
    const reasoning = outputs.find((o) => o.type === 'engine.reasoning');
    const message = outputs.find((o) => o.type === 'engine.assistant.message');
    expect(reasoning).toMatchObject({ text: 'I thought about it' });
    expect(reasoning?.type === 'engine.reasoning' && reasoning.item_id).toMatch(/#0$/);
    expect(message?.type === 'engine.assistant.message' && message.message_id).toMatch(/#1$/);
    expect(codes(outputs)).toEqual([]);
  });

  it('maps tool names to kinds, file tools to file changes, errors to failed results', () => {
    const outputs = parseAll(lines('tool-kinds'));
    expectValid(outputs);
    expect(outputs.flatMap((o) => (o.type === 'engine.tool.call' ? [[o.kind, o.name]] : []))).toEqual([
      ['file_change', 'Write'],
      ['file_change', 'Edit'],
      ['skill', 'Skill'],
      ['web_search', 'WebFetch'],
      ['mcp', 'mcp__docs__search'],
      ['other', 'TodoWrite'],
    ]);
    expect(outputs.filter((o) => o.type === 'engine.file.change')).toEqual([
      { type: 'engine.file.change', changes: [{ path: '/work/run/notes.md', kind: 'write' }] },
      { type: 'engine.file.change', changes: [{ path: '/work/run/notes.md', kind: 'edit' }] },
    ]);
    expect(outputs).toContainEqual({
      type: 'engine.tool.result',
      call_id: 'toolu_s',
      status: 'completed',
      output: 'Launching skill: demo-hello',
      exit_code: null,
    });
    expect(outputs).toContainEqual({
      type: 'engine.tool.result',
      call_id: 'toolu_f',
      status: 'failed',
      output: 'Request failed',
      exit_code: null,
    });
    expect(outputs).toContainEqual({
      type: 'engine.usage',
      usage: { input_tokens: 70, cached_input_tokens: 5, output_tokens: 35, reasoning_output_tokens: null },
    });
    expect(claudeToolKind('NotebookEdit')).toBe('file_change');
    expect(claudeToolKind('WebSearch')).toBe('web_search');
    expect(codes(outputs)).toEqual([]);
  });

  it('a result with is_error or a non-success subtype fails the turn with its text or errors', () => {
    expect(recorded('result-error-during-execution').judgement).toMatchObject({
      state: 'failed',
      failure: { category: 'protocol' },
    });
    expect(parseAll(lines('result-error-during-execution')).at(-1)).toEqual({
      type: 'engine.turn.end',
      status: 'failed',
      error: 'Error: the tool call could not be parsed',
    });
    expect(parseAll(lines('result-max-turns')).at(-1)).toEqual({
      type: 'engine.turn.end',
      status: 'failed',
      error: 'claude result error_max_turns without a message',
    });
  });

  it('truncated stream: STREAM_PARSE_ERROR and CLAUDE_TURN_NOT_ENDED, never completed', () => {
    const { summary, judgement } = recorded('truncated');
    expect(summary.diagnostics.map((d) => d.code)).toEqual(
      expect.arrayContaining(['STREAM_PARSE_ERROR', 'CLAUDE_TURN_NOT_ENDED']),
    );
    expect(judgement.state).not.toBe('completed');
  });

  it('noise lines become STREAM_PARSE_ERROR diagnostics, stream_event is ignored, the events still parse', () => {
    const { summary } = recorded('noise');
    expect(summary.completed).toBe(true);
    expect(summary.diagnostics.map((d) => d.code)).toEqual(['STREAM_PARSE_ERROR', 'STREAM_PARSE_ERROR']);
  });

  it('reports unknown events as info, stderr errors as ENGINE_STDERR; never throws on garbage', () => {
    expect(codes(parseAll(['{"type":"system","subtype":"brand_new"}', '{"type":"brand_new"}']))).toEqual([
      'CLAUDE_UNKNOWN_EVENT',
      'CLAUDE_UNKNOWN_EVENT',
    ]);
    expect(
      codes(
        parseAll(['42', 'null', '[1]', '{"no":"type"}', '{"type":"assistant"}', '{"type":"system","subtype":"init"}']),
      ),
    ).toEqual(Array(6).fill('STREAM_PARSE_ERROR'));
    const stderr = createClaudeParser();
    expect(stderr.line('stderr', 'plain log line')).toEqual([]);
    expect(codes(stderr.line('stderr', 'Error: boom'))).toEqual(['ENGINE_STDERR']);
    let seed = 11;
    const rand = (n: number): number => {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff;
      return seed % n;
    };
    const parser = createClaudeParser();
    for (let i = 0; i < 3000; i += 1) {
      const type = ['system', 'assistant', 'user', 'result', 'stream_event'][rand(5)];
      const junk = [
        null,
        1,
        'x',
        [],
        {},
        {
          id: rand(2) ? 5 : 'm',
          model: '<synthetic>',
          content: [
            null,
            1,
            {
              type: ['text', 'tool_use', 'thinking', 'tool_result', 'x'][rand(5)],
              id: rand(2) ? 3 : 't',
              name: [5, 'Bash', 'Write'][rand(3)],
              input: [null, { file_path: 3 }][rand(2)],
              text: rand(2) ? 1 : 'y',
              content: [null, 'x', [{ text: 2 }]][rand(3)],
              is_error: rand(2) === 0,
            },
          ][rand(3)],
        },
      ][rand(6)];
      const line =
        rand(4) === 0
          ? Buffer.from(Array.from({ length: rand(80) }, () => rand(256))).toString('utf8')
          : JSON.stringify({
              type,
              subtype: ['init', 'api_retry', 'success', 'error_x', 7][rand(5)],
              session_id: rand(2) ? 's' : 5,
              message: junk,
              error: rand(2) ? 'e' : null,
              is_error: rand(2) === 0,
              usage: junk,
              errors: junk,
              result: junk,
            });
      let outputs: ParserOutput[] = [];
      expect(() => (outputs = parser.line(rand(5) === 0 ? 'stderr' : 'stdout', line))).not.toThrow();
      expectValid(outputs);
    }
    expectValid(parser.end());
  });
});
