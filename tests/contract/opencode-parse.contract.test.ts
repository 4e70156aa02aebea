/**
 * opencode `run --format json` parser: what only it does, on streams recorded from the real opencode 1.18.33
 * against the scripted model (turn1, turn2-resume, error-401, error-500-retried), derived edge cases
 * (truncated, noise) and hand-written ones (file-tool, finish-length, unknown-tool), through `translateRecorded`.
 * Their goldens and the error table are rows of engine-goldens.contract.test.ts.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { opencodeEngine } from '../../src/engines/opencode/index.js';
import { createOpencodeParser } from '../../src/engines/opencode/parse.js';
import type { ParserOutput } from '../../src/engines/engine.js';
import { DiagnosticSchema, ParsedEventSchema } from '../../src/protocol/index.js';
import { translateRecorded } from '../../src/translate/recorded.js';

const STREAMS = path.resolve(import.meta.dirname, '..', '..', 'fixtures', 'streams', 'opencode');
function recorded(name: string) {
  return translateRecorded(
    opencodeEngine,
    { stdout: fs.readFileSync(path.join(STREAMS, `${name}.stdout.jsonl`)) },
    { runId: 'golden' },
  );
}

function parseAll(lines: readonly string[]): ParserOutput[] {
  const parser = createOpencodeParser();
  return [...lines.flatMap((line) => parser.line('stdout', line)), ...parser.end()];
}

function expectValid(outputs: ParserOutput[]): void {
  for (const output of outputs) {
    if (output.type === 'diagnostic') expect(DiagnosticSchema.safeParse(output.diagnostic).success).toBe(true);
    else expect(ParsedEventSchema.safeParse(output).success, JSON.stringify(output)).toBe(true);
  }
}

const codes = (outputs: ParserOutput[]): string[] =>
  outputs.flatMap((o) => (o.type === 'diagnostic' ? [o.diagnostic.code] : []));

describe('opencode parser goldens', () => {
  it('turn1: session, bash tool call with exit 0, final text with the done marker → completed', () => {
    const { summary, judgement } = recorded('turn1');
    expect(summary.session_id).toMatch(/^ses_/);
    expect(summary).toMatchObject({
      tool_calls: 1,
      completed: true,
      error: null,
      final_message: 'Wrote hello.txt.\n__SKILL_DONE__',
    });
    expect(judgement.state).toBe('completed');
    expect(summary.diagnostics).toEqual([]);
  });

  it('turn2-resume: same session, text without the marker → awaiting input', () => {
    expect(recorded('turn2-resume').summary.session_id).toBe(recorded('turn1').summary.session_id);
    expect(recorded('turn2-resume').judgement.state).toBe('awaiting_input');
  });

  it('error events fail the attempt and are categorized by the error table', () => {
    const e401 = recorded('error-401');
    expect(e401.judgement).toMatchObject({
      state: 'failed',
      failure: { category: 'auth', code: 'ENGINE_AUTH_FAILED' },
    });
    expect(e401.summary.error).toContain('APIError: scripted bad key (status 401)');
    expect(recorded('error-500-retried').judgement.state).toBe('failed');
  });

  it('truncated stream: STREAM_PARSE_ERROR and OPENCODE_TURN_NOT_ENDED, never completed', () => {
    const { summary, judgement } = recorded('truncated');
    expect(summary.diagnostics.map((d) => d.code)).toEqual(
      expect.arrayContaining(['STREAM_PARSE_ERROR', 'OPENCODE_TURN_NOT_ENDED']),
    );
    expect(judgement.state).not.toBe('completed');
  });

  it('noise lines become STREAM_PARSE_ERROR diagnostics and the events still parse', () => {
    const { summary } = recorded('noise');
    expect(summary.completed).toBe(true);
    expect(summary.diagnostics.map((d) => d.code)).toEqual(['STREAM_PARSE_ERROR', 'STREAM_PARSE_ERROR']);
  });

  it('maps write to file_change (+ file change) and a failed bash call to a failed result', () => {
    const outputs = parseAll(
      fs.readFileSync(path.join(STREAMS, 'file-tool.stdout.jsonl'), 'utf8').split('\n').filter(Boolean),
    );
    expectValid(outputs);
    expect(outputs).toContainEqual({
      type: 'engine.file.change',
      changes: [{ path: '/work/run/notes.md', kind: 'write' }],
    });
    expect(outputs.flatMap((o) => (o.type === 'engine.tool.call' ? [[o.kind, o.name]] : []))).toEqual([
      ['file_change', 'write'],
      ['shell', 'bash'],
    ]);
    expect(outputs).toContainEqual({
      type: 'engine.tool.result',
      call_id: 'call_bad1',
      status: 'failed',
      output: 'Command exited with code 1',
      exit_code: null,
    });
  });

  it('a call of a tool opencode lacks (repaired into its invalid tool) is that call, failed', () => {
    const result = recorded('unknown-tool');
    const outputs = parseAll(
      fs.readFileSync(path.join(STREAMS, 'unknown-tool.stdout.jsonl'), 'utf8').split('\n').filter(Boolean),
    );
    expect(outputs.filter((o) => o.type === 'engine.tool.call')).toEqual([
      expect.objectContaining({ call_id: 'call_u0001', name: 'run_shell' }),
    ]);
    expect(outputs.filter((o) => o.type === 'engine.tool.result')).toEqual([
      expect.objectContaining({
        call_id: 'call_u0001',
        status: 'failed',
        output: expect.stringContaining("Model tried to call unavailable tool 'run_shell'"),
      }),
    ]);
    expect(result.judgement.state).toBe('awaiting_input');
  });

  it('finish reason length fails the turn; tool-calls does not end it', () => {
    // The turn ended as failed (output cut at the length limit): a done marker in the cut message does not complete it.
    expect(recorded('finish-length').judgement.state).toBe('failed');
    const out = parseAll([
      JSON.stringify({ type: 'step_finish', sessionID: 's', part: { reason: 'length', tokens: {} } }),
    ]);
    expect(out).toContainEqual({
      type: 'engine.turn.end',
      status: 'failed',
      error: expect.stringContaining('MessageOutputLengthError'),
    });
    const tc = parseAll([
      JSON.stringify({ type: 'step_start', sessionID: 's', part: {} }),
      JSON.stringify({ type: 'step_finish', sessionID: 's', part: { reason: 'tool-calls' } }),
    ]);
    expect(codes(tc)).toEqual(['OPENCODE_TURN_NOT_ENDED']);
  });

  it('reports unknown events as info and non-objects as STREAM_PARSE_ERROR; never throws on garbage', () => {
    expect(codes(parseAll(['{"type":"session.compacted"}']))).toEqual(['OPENCODE_UNKNOWN_EVENT']);
    expect(codes(parseAll(['42', 'null', '[1]', '{"no":"type"}', '{"type":"text"}']))).toEqual(
      Array(5).fill('STREAM_PARSE_ERROR'),
    );
    let seed = 7;
    const rand = (n: number): number => {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff;
      return seed % n;
    };
    const parser = createOpencodeParser();
    for (let i = 0; i < 2000; i += 1) {
      const type = ['text', 'tool_use', 'step_finish', 'step_start', 'error', 'reasoning'][rand(6)];
      const junk = [
        null,
        1,
        'x',
        [],
        {},
        {
          state: {
            status: ['completed', 'error', 7][rand(3)],
            input: [null, 'x', { filePath: 3 }][rand(3)],
            metadata: { exit: 1.5 },
          },
          tool: ['bash', 'write', 5][rand(3)],
          tokens: { input: -1 },
          reason: [null, 'stop', 'x'][rand(3)],
        },
      ][rand(6)];
      const line =
        rand(4) === 0
          ? Buffer.from(Array.from({ length: rand(80) }, () => rand(256))).toString('utf8')
          : JSON.stringify({ type, sessionID: rand(2) ? 's' : 5, part: junk, error: junk });
      let outputs: ParserOutput[] = [];
      expect(() => (outputs = parser.line(rand(5) === 0 ? 'stderr' : 'stdout', line))).not.toThrow();
      expectValid(outputs);
    }
    expectValid(parser.end());
  });
});
