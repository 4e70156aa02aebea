/**
 * gemini-cli parser: what only it does, on streams recorded from the real gemini-cli 0.61.0 against the scripted
 * model (turn1, turn2-resume, error-401, error-429 in stream-json; json-document, json-error-401 in
 * `--output-format json`; pty), plus edge cases written by hand (pretty-printed document after noise lines,
 * documents on both streams, truncated stream, noise line, error result), through `translateRecorded`.
 * Their goldens and the error table are rows of engine-goldens.contract.test.ts.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { geminiEngine } from '../../src/engines/gemini/index.js';
import { createGeminiParser } from '../../src/engines/gemini/parse.js';
import type { ParserOutput } from '../../src/engines/engine.js';
import { DiagnosticSchema, ParsedEventSchema } from '../../src/protocol/index.js';
import { translateRecorded, type RecordedOutput } from '../../src/translate/recorded.js';

const STREAMS = path.resolve(import.meta.dirname, '..', '..', 'fixtures', 'streams', 'gemini');
/** Every capture of fixture `name`: `<name>.stdout.jsonl`, `<name>.stderr.log`, `<name>.pty.log`. */
function captures(name: string): RecordedOutput {
  const read = (suffix: string): Buffer | undefined => {
    const file = path.join(STREAMS, `${name}.${suffix}`);
    return fs.existsSync(file) ? fs.readFileSync(file) : undefined;
  };
  const output: RecordedOutput = {};
  const stdout = read('stdout.jsonl');
  const stderr = read('stderr.log');
  const pty = read('pty.log');
  if (stdout) output.stdout = stdout;
  if (stderr) output.stderr = stderr;
  if (pty) output.pty = pty;
  return output;
}

function recorded(name: string) {
  return translateRecorded(geminiEngine, captures(name), { runId: 'golden' });
}

function parseLines(lines: ReadonlyArray<[ParserStream, string]>): ParserOutput[] {
  const parser = createGeminiParser();
  return [...lines.flatMap(([stream, line]) => parser.line(stream, line)), ...parser.end()];
}
type ParserStream = 'stdout' | 'stderr' | 'pty';

function expectValid(outputs: ParserOutput[]): void {
  for (const output of outputs) {
    if (output.type === 'diagnostic') expect(DiagnosticSchema.safeParse(output.diagnostic).success).toBe(true);
    else expect(ParsedEventSchema.safeParse(output).success, JSON.stringify(output)).toBe(true);
  }
}

const codes = (diagnostics: ReadonlyArray<{ code: string }>): string[] => diagnostics.map((d) => d.code);

describe('gemini parser goldens', () => {
  it('turn1: session from init, shell tool call, streamed final message with the done marker → completed', () => {
    const { summary, judgement, rasp } = recorded('turn1');
    expect(summary.session_id).toMatch(/^[0-9a-f-]{36}$/);
    expect(summary).toMatchObject({
      tool_calls: 1,
      completed: true,
      error: null,
      final_message: 'Wrote hello.txt.\n__SKILL_DONE__',
    });
    expect(judgement).toMatchObject({ state: 'completed', reason: 'done_marker' });
    expect(summary.diagnostics).toEqual([]);
    const messages = rasp.flatMap(({ data }) =>
      data.type === 'engine.assistant.message' ? [[data.final, data.text]] : [],
    );
    expect(messages).toEqual([
      [false, 'Wrote hello.txt.\n__SKILL_DONE__'],
      [true, 'Wrote hello.txt.\n__SKILL_DONE__'],
    ]);
    expect(rasp.find(({ data }) => data.type === 'engine.tool.call')?.data).toMatchObject({
      kind: 'shell',
      name: 'run_shell_command',
      input: { command: "printf 'hello from agent-harness\\n' > hello.txt" },
    });
  });

  it('turn2-resume: the same session id, a text answer without the marker → awaiting input', () => {
    expect(recorded('turn2-resume').summary.session_id).toBe(recorded('turn1').summary.session_id);
    expect(recorded('turn2-resume').judgement.state).toBe('awaiting_input');
  });

  it('error results fail the attempt and are categorized by the error table', () => {
    expect(recorded('error-401').judgement).toMatchObject({
      state: 'failed',
      failure: { category: 'auth', code: 'ENGINE_AUTH_FAILED' },
    });
    expect(recorded('error-429').judgement).toMatchObject({
      state: 'failed',
      failure: { category: 'rate_limit', code: 'ENGINE_RATE_LIMITED' },
    });
    expect(recorded('json-error-401').judgement).toMatchObject({ state: 'failed', failure: { category: 'auth' } });
    const result = recorded('result-error');
    expect(result.judgement).toMatchObject({ state: 'failed', reason: 'turn_failed' });
    expect(result.summary.error).toContain('max session turns');
  });

  it('json output: the pretty document on stdout is parsed whole (no fallback diagnostic), the error document on stderr too', () => {
    const ok = recorded('json-document');
    expect(ok.judgement.state).toBe('completed');
    expect(ok.summary.session_id).toMatch(/^[0-9a-f-]{36}$/);
    // The only tool call of this capture is in stats.tools.byName: counted, and said so.
    expect(codes(ok.summary.diagnostics)).toEqual(['GEMINI_TOOL_CALLS_FROM_STATS']);
    expect(ok.summary.tool_calls).toBe(1);
    // FCMP carries the diagnostic's level (info here), not just code and message.
    expect(ok.fcmp.filter((e) => e.type === 'diagnostic.warning').map((e) => e.data)).toEqual([
      {
        code: 'GEMINI_TOOL_CALLS_FROM_STATS',
        message: '1 tool call(s) known only from stats.tools counts (no inputs, order unknown)',
        level: 'info',
      },
    ]);
    expect(ok.rasp.map((e) => e.data).filter((d) => d.type === 'engine.tool.call')).toEqual([
      {
        type: 'engine.tool.call',
        call_id: 'stats:run_shell_command#0',
        kind: 'shell',
        name: 'run_shell_command',
        input: null,
      },
    ]);
    expect(codes(recorded('json-error-401').summary.diagnostics)).not.toContain('GEMINI_STREAM_JSON_FALLBACK_USED');
  });

  it('a pretty-printed document after noise lines: GEMINI_STDOUT_NOISE per noise line, then the document', () => {
    const { summary, judgement } = recorded('pretty-noise');
    expect(judgement.state).toBe('completed');
    expect(summary).toMatchObject({
      session_id: '6f1c2a47-0d7e-4f0e-9a55-5b0c4f0b2e11',
      final_message: 'Wrote hello.txt.\n__SKILL_DONE__',
    });
    expect(codes(summary.diagnostics).filter((c) => c !== 'GEMINI_TOOL_CALLS_FROM_STATS')).toEqual([
      'GEMINI_STDOUT_NOISE',
      'GEMINI_STDOUT_NOISE',
    ]);
  });

  it('a json document found only in the PTY transcript is the fallback: GEMINI_STREAM_JSON_FALLBACK_USED', () => {
    const pty = fs.readFileSync(path.join(STREAMS, 'json-document.stdout.jsonl'));
    const { summary, judgement } = translateRecorded(geminiEngine, { pty }, { runId: 'golden' });
    expect(judgement.state).toBe('completed');
    expect(codes(summary.diagnostics)).toContain('GEMINI_STREAM_JSON_FALLBACK_USED');
  });

  it("PTY fallback keeps the split streams' diagnostics (stdout noise, stderr errors)", () => {
    const pty = fs.readFileSync(path.join(STREAMS, 'json-document.stdout.jsonl'));
    const stdout = Buffer.from('YOLO mode is enabled. All tool calls will be automatically approved.\n');
    const stderr = Buffer.from('Error: something went wrong\n');
    const { summary } = translateRecorded(geminiEngine, { stdout, stderr, pty }, { runId: 'golden' });
    expect(codes(summary.diagnostics)).toEqual([
      'PTY_FALLBACK_USED',
      'GEMINI_STDOUT_NOISE',
      'ENGINE_STDERR',
      'GEMINI_STREAM_JSON_FALLBACK_USED',
      'GEMINI_TOOL_CALLS_FROM_STATS',
    ]);
  });

  it('stats.tools counts: failures become failed results; counts beside stream-json tool events add nothing', () => {
    const doc = {
      session_id: 's',
      response: 'ok',
      stats: { tools: { byName: { read_file: { count: 2, success: 1, fail: 1 }, bogus: 'x' } } },
    };
    const parser = createGeminiParser();
    const outputs = [...parser.line('stdout', JSON.stringify(doc)), ...parser.end()];
    const results = outputs.filter((o) => o.type === 'engine.tool.result');
    expect(results.map((r) => r.type === 'engine.tool.result' && r.status)).toEqual(['completed', 'failed']);
    expect(outputs.filter((o) => o.type === 'engine.tool.call')).toHaveLength(2);
  });

  it('documents on both streams: the stderr document wins and the stdout one is not consumed', () => {
    const { summary, fcmp } = recorded('priority');
    expect(summary.final_message).toBe('answer from the stderr document\n__SKILL_DONE__');
    expect(fcmp.filter((e) => e.type === 'assistant.message.final')).toHaveLength(1);
    expect(codes(summary.diagnostics)).not.toContain('GEMINI_STREAM_JSON_FALLBACK_USED');
  });

  it('pty capture: parsed only as a fallback, stderr warnings merged in are not noise', () => {
    const { summary, judgement } = recorded('pty');
    expect(judgement.state).toBe('completed');
    expect(summary.tool_calls).toBe(1);
    expect(codes(summary.diagnostics)).toEqual([]);
    const both = translateRecorded(geminiEngine, { ...captures('turn1'), pty: captures('pty').pty! });
    expect(codes(both.summary.diagnostics)).not.toContain('PTY_FALLBACK_USED');
  });

  it('truncated stream: STREAM_PARSE_ERROR and GEMINI_TURN_NOT_ENDED, never completed', () => {
    const { summary, judgement } = recorded('truncated');
    expect(codes(summary.diagnostics)).toEqual(['STREAM_PARSE_ERROR', 'GEMINI_TURN_NOT_ENDED']);
    expect(judgement.state).toBe('failed');
  });

  it('a noise line inside stream-json is a GEMINI_STDOUT_NOISE diagnostic; the events still parse', () => {
    const { summary, judgement } = recorded('noise');
    expect(judgement.state).toBe('completed');
    expect(codes(summary.diagnostics)).toEqual(['GEMINI_STDOUT_NOISE']);
  });

  it('result-error: deltas join into one final message before the tool call; file change; failed tool; warning event is non-fatal', () => {
    const outputs = parseLines(
      fs
        .readFileSync(path.join(STREAMS, 'result-error.stdout.jsonl'), 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((l) => ['stdout', l] as [ParserStream, string]),
    );
    expectValid(outputs);
    expect(outputs.filter((o) => o.type === 'engine.assistant.message')).toEqual([
      { type: 'engine.assistant.message', message_id: 'msg_1', text: 'Let me ', final: false },
      { type: 'engine.assistant.message', message_id: 'msg_1', text: 'write the file.', final: false },
      { type: 'engine.assistant.message', message_id: 'msg_1', text: 'Let me write the file.', final: true },
    ]);
    expect(outputs).toContainEqual({
      type: 'engine.file.change',
      changes: [{ path: '/work/run/notes.md', kind: 'add' }],
    });
    expect(outputs).toContainEqual({
      type: 'engine.tool.result',
      call_id: 'run_shell_command_2',
      status: 'failed',
      output: 'Command exited with code 1',
      exit_code: null,
    });
    expect(outputs).toContainEqual({
      type: 'engine.error',
      message: 'Loop detected, stopping execution',
      fatal: false,
    });
  });
});

describe('createGeminiParser edge cases', () => {
  it('never throws and keeps every output valid on arbitrary input', () => {
    const junk: Array<[ParserStream, string]> = [
      ['stdout', '{'],
      ['stdout', '  "a": ['],
      ['stderr', '}'],
      ['stdout', '{"type":"result"}'],
      ['stdout', '[1,2]'],
      ['pty', '\u0000{"type":"init"}'],
      ['stdout', '{"type":"tool_result"}'],
      ['stdout', '}'],
    ];
    const outputs = parseLines(junk);
    expectValid(outputs);
  });

  it('a second stdout document is ignored with GEMINI_EXTRA_DOCUMENT', () => {
    const doc = JSON.stringify({ session_id: 's1', response: 'one' });
    const outputs = parseLines([
      ['stdout', doc],
      ['stdout', JSON.stringify({ session_id: 's1', response: 'two' })],
    ]);
    expect(outputs.filter((o) => o.type === 'engine.assistant.message')).toEqual([
      { type: 'engine.assistant.message', message_id: 'msg_1', text: 'one', final: true },
    ]);
    expect(outputs.some((o) => o.type === 'diagnostic' && o.diagnostic.code === 'GEMINI_EXTRA_DOCUMENT')).toBe(true);
  });

  it("a JSON object with no document field ({}, another tool's JSON) is noise, never a completed turn", () => {
    const outputs = parseLines([
      ['stdout', '{}'],
      ['stdout', '{"type":"thread.started","thread_id":"t1"}'],
      ['stdout', '{'],
      ['stdout', '  "a": 1'],
      ['stdout', '}'],
      ['stderr', '{"b": 2}'],
    ]);
    expectValid(outputs);
    expect(outputs.filter((o) => o.type === 'engine.turn.end')).toEqual([]);
    const noise = outputs.filter((o) => o.type === 'diagnostic' && o.diagnostic.code === 'GEMINI_STDOUT_NOISE');
    expect(noise).toHaveLength(3);
    const { judgement } = translateRecorded(geminiEngine, { stdout: Buffer.from('{"a":1}\n') });
    expect(judgement.state).toBe('failed');
  });

  it('a document is not consumed once a stream-json result was seen', () => {
    const lines = fs.readFileSync(path.join(STREAMS, 'turn1.stdout.jsonl'), 'utf8').split('\n').filter(Boolean);
    const outputs = parseLines([
      ...lines.map((l) => ['stdout', l] as [ParserStream, string]),
      ['stderr', JSON.stringify({ session_id: 'other', response: 'dup' })],
    ]);
    expect(outputs.filter((o) => o.type === 'engine.turn.end')).toHaveLength(1);
    expect(outputs.filter((o) => o.type === 'engine.session')).toHaveLength(1);
  });
});
