/**
 * codex `exec --json` parser: what only it does (per-turn ids, item kinds, usage, stderr and pty lines). Its goldens
 * are the translate pipeline's (translate.contract.test.ts) and its error table a row of engine-goldens.contract.test.ts.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { createCodexParser } from '../../src/engines/codex/parse.js';
import type { ParserOutput } from '../../src/engines/engine.js';
import { DiagnosticSchema, ParsedEventSchema } from '../../src/protocol/index.js';

const fixture = (name: string): string =>
  readFileSync(new URL(`../../fixtures/streams/codex/${name}`, import.meta.url), 'utf8');

function parseAll(lines: readonly string[]): ParserOutput[] {
  const parser = createCodexParser();
  return [...lines.flatMap((line) => parser.line('stdout', line)), ...parser.end()];
}

const ev = (event: unknown): string => JSON.stringify(event);
const codes = (outputs: ParserOutput[]): string[] =>
  outputs.flatMap((o) => (o.type === 'diagnostic' ? [o.diagnostic.code] : []));

/** Every output must fit the protocol: the RASP builder would otherwise replace it with a diagnostic. */
function expectValid(outputs: ParserOutput[]): void {
  for (const output of outputs) {
    if (output.type === 'diagnostic') expect(DiagnosticSchema.safeParse(output.diagnostic).success).toBe(true);
    else expect(ParsedEventSchema.safeParse(output).success, JSON.stringify(output)).toBe(true);
  }
}

describe('createCodexParser', () => {
  it('maps the recorded turn-1 sample to session, turn, tool call/result, final message, usage and turn end', () => {
    const outputs = parseAll(fixture('turn1.stdout.jsonl').split('\n').filter(Boolean));
    expectValid(outputs);
    expect(outputs).toEqual([
      { type: 'engine.session', session_id: '01a2053b-9f5a-7bc0-b066-eb965712ebee' },
      { type: 'engine.turn.started' },
      {
        type: 'engine.tool.call',
        call_id: 'item_0#1',
        kind: 'shell',
        name: 'command_execution',
        input: { command: "/bin/bash -lc 'echo hello > out.txt'" },
      },
      { type: 'engine.tool.result', call_id: 'item_0#1', status: 'completed', output: '', exit_code: 0 },
      { type: 'engine.assistant.message', message_id: 'item_1#1', text: 'DONE', final: true },
      {
        type: 'engine.usage',
        usage: { input_tokens: 20, cached_input_tokens: 0, output_tokens: 10, reasoning_output_tokens: 0 },
      },
      { type: 'engine.turn.end', status: 'completed', error: null },
    ]);
  });

  it('keeps message and call ids unique when codex restarts item ids in the next turn', () => {
    const turn = [
      ev({ type: 'turn.started' }),
      ev({ type: 'item.completed', item: { id: 'item_0', type: 'agent_message', text: 'x' } }),
      ev({ type: 'turn.completed', usage: {} }),
    ];
    const ids = parseAll([...turn, ...turn]).flatMap((o) =>
      o.type === 'engine.assistant.message' ? [o.message_id] : [],
    );
    expect(ids).toEqual(['item_0#1', 'item_0#2']);
  });

  it('emits the tool call once, and also when only item.completed is seen', () => {
    const item = {
      id: 'item_3',
      type: 'command_execution',
      command: 'ls',
      aggregated_output: 'a\n',
      exit_code: 2,
      status: 'failed',
    };
    const onlyCompleted = parseAll([ev({ type: 'item.completed', item })]);
    expect(onlyCompleted.map((o) => o.type)).toEqual(['engine.tool.call', 'engine.tool.result']);
    expect(onlyCompleted[1]).toEqual({
      type: 'engine.tool.result',
      call_id: 'item_3#1',
      status: 'failed',
      output: 'a\n',
      exit_code: 2,
    });
    const both = parseAll([
      ev({ type: 'item.started', item }),
      ev({ type: 'item.updated', item }),
      ev({ type: 'item.completed', item }),
    ]);
    expect(both.map((o) => o.type)).toEqual(['engine.tool.call', 'engine.tool.result']);
  });

  it('maps file_change, mcp_tool_call and web_search items to their tool kinds', () => {
    const outputs = parseAll(fixture('file-change.stdout.jsonl').split('\n').filter(Boolean));
    expectValid(outputs);
    const calls = outputs.flatMap((o) => (o.type === 'engine.tool.call' ? [[o.kind, o.name]] : []));
    expect(calls).toEqual([
      ['file_change', 'file_change'],
      ['shell', 'command_execution'],
      ['mcp', 'docs.search'],
      ['web_search', 'web_search'],
    ]);
    expect(outputs).toContainEqual({
      type: 'engine.file.change',
      changes: [{ path: '/work/run/notes.md', kind: 'add' }],
    });
    expect(outputs).toContainEqual({
      type: 'engine.tool.result',
      call_id: 'item_2#1',
      status: 'completed',
      output: 'found 3',
      exit_code: null,
    });
    expect(codes(outputs)).toEqual([]);
  });

  it('treats error events and error items as non-fatal, and turn.failed as a failed turn end', () => {
    const outputs = parseAll([
      ev({ type: 'error', message: 'Reconnecting... 2/5 (stream disconnected)' }),
      ev({
        type: 'item.completed',
        item: { id: 'item_0', type: 'error', message: 'Model metadata for `m` not found' },
      }),
      ev({ type: 'turn.failed', error: { message: 'exceeded retry limit, last status: 429' } }),
      ev({ type: 'turn.failed' }),
    ]);
    expect(outputs).toEqual([
      { type: 'engine.error', message: 'Reconnecting... 2/5 (stream disconnected)', fatal: false },
      { type: 'engine.error', message: 'Model metadata for `m` not found', fatal: false },
      { type: 'engine.turn.end', status: 'failed', error: 'exceeded retry limit, last status: 429' },
      { type: 'engine.turn.end', status: 'failed', error: 'turn failed without a message' },
    ]);
  });

  it('maps usage fields and nulls what codex did not report', () => {
    const [usage] = parseAll([
      ev({ type: 'turn.completed', usage: { input_tokens: 5, output_tokens: -1, reasoning_output_tokens: 2.5 } }),
    ]);
    expect(usage).toEqual({
      type: 'engine.usage',
      usage: { input_tokens: 5, cached_input_tokens: null, output_tokens: null, reasoning_output_tokens: null },
    });
  });

  it('turns unknown events and items into CODEX_UNKNOWN_EVENT info diagnostics', () => {
    const outputs = parseAll([
      ev({ type: 'thread.compacted' }),
      ev({ type: 'item.completed', item: { id: 'i', type: 'collab_tool_call' } }),
    ]);
    expect(outputs.map((o) => (o.type === 'diagnostic' ? [o.diagnostic.code, o.diagnostic.level] : o.type))).toEqual([
      ['CODEX_UNKNOWN_EVENT', 'info'],
      ['CODEX_UNKNOWN_EVENT', 'info'],
    ]);
  });

  it('reports non-JSON stdout as STREAM_PARSE_ERROR with the first 200 characters', () => {
    const line = `not json ${'x'.repeat(500)}`;
    const [out] = parseAll([line]);
    expect(out).toMatchObject({ type: 'diagnostic', diagnostic: { code: 'STREAM_PARSE_ERROR', level: 'warning' } });
    const message = out.type === 'diagnostic' ? out.diagnostic.message : '';
    expect(message).toContain(line.slice(0, 200));
    expect(message).not.toContain(line.slice(0, 201));
    expect(codes(parseAll(['42', 'null', '[1]', '{"no":"type"}']))).toEqual(Array(4).fill('STREAM_PARSE_ERROR'));
    expect(parseAll(['', '   '])).toEqual([]);
  });

  it('ignores ordinary stderr lines and reports error-looking ones as ENGINE_STDERR info', () => {
    const parser = createCodexParser();
    const outputs = fixture('stderr-errors.stderr.log')
      .split('\n')
      .filter(Boolean)
      .flatMap((line) => parser.line('stderr', line));
    expect(outputs.map((o) => (o.type === 'diagnostic' ? [o.diagnostic.code, o.diagnostic.level] : o.type))).toEqual([
      ['ENGINE_STDERR', 'info'],
      ['ENGINE_STDERR', 'info'],
    ]);
  });

  it('parses JSON lines of a merged pty stream and treats the rest like stderr', () => {
    const parser = createCodexParser();
    expect(parser.line('pty', '  {"type":"turn.started"}')).toEqual([{ type: 'engine.turn.started' }]);
    expect(parser.line('pty', 'Reading additional input from stdin...')).toEqual([]);
    expect(parser.line('pty', 'Error: boom')).toMatchObject([
      { type: 'diagnostic', diagnostic: { code: 'ENGINE_STDERR' } },
    ]);
    // Terminal echo of input in front of an event (seen under `script`): the event is still parsed.
    expect(parser.line('pty', '^@{"type":"thread.started","thread_id":"t-1"}')).toEqual([
      {
        type: 'diagnostic',
        diagnostic: { code: 'PTY_NOISE_STRIPPED', message: 'ignored "^@" before a JSON event', level: 'info' },
      },
      { type: 'engine.session', session_id: 't-1' },
    ]);
  });

  it('reports a turn left open at the end of the stream', () => {
    expect(codes(parseAll([ev({ type: 'turn.started' })]))).toEqual(['CODEX_TURN_NOT_ENDED']);
    expect(codes(parseAll(fixture('turn1.stdout.jsonl').split('\n').filter(Boolean)))).toEqual([]);
  });

  it('never throws and always yields protocol-valid outputs on random garbage', () => {
    let seed = 0x5eed;
    const rand = (n: number): number => {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff;
      return seed % n;
    };
    const shapes = [
      () => Buffer.from(Array.from({ length: rand(120) }, () => rand(256))).toString('utf8'),
      () =>
        ev({
          type: ['item.started', 'item.completed', 'item.updated'][rand(3)],
          item: [
            null,
            1,
            'x',
            [],
            {
              type: rand(2) ? 'command_execution' : 'file_change',
              changes: rand(2) ? [1, null, { path: 3 }] : 'x',
              exit_code: rand(2) ? 1.5 : '0',
              status: 'weird',
            },
          ][rand(5)],
        }),
      () =>
        ev({
          type: ['thread.started', 'turn.completed', 'turn.failed', 'error'][rand(4)],
          thread_id: rand(2) ? '' : 7,
          usage: rand(2) ? 'x' : { input_tokens: 'a' },
          error: rand(2) ? null : 'e',
          message: 5,
        }),
      () =>
        ev({
          type: 'item.completed',
          item: {
            id: rand(2) ? 5 : 'i',
            type: ['agent_message', 'reasoning', 'mcp_tool_call', 'web_search', 'error', 'todo_list'][rand(6)],
            text: rand(2) ? null : {},
            result: { content: rand(2) ? 'x' : [{ text: 1 }] },
            error: rand(2) ? { message: 1 } : undefined,
          },
        }),
    ];
    const parser = createCodexParser();
    for (let i = 0; i < 4000; i += 1) {
      const line = shapes[rand(shapes.length)]();
      const stream = rand(5) === 0 ? 'stderr' : 'stdout';
      let outputs: ParserOutput[] = [];
      expect(() => (outputs = parser.line(stream, line))).not.toThrow();
      expectValid(outputs);
    }
    expectValid(parser.end());
  });
});
