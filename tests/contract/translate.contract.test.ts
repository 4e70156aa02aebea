import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { createCodexParser } from '../../src/engines/codex/parse.js';
import { codexFacts } from '../../src/engines/codex/facts.js';
import type { EngineParser } from '../../src/engines/engine.js';
import { checkedParser } from '../../src/engines/checked-parser.js';
import {
  FcmpEventSchema,
  RaspEventSchema,
  type FcmpEvent,
  type RaspEvent,
  type StreamName,
} from '../../src/protocol/index.js';
import {
  DONE_MARKER,
  createLineSplitter,
  createRaspBuilder,
  hasDoneMarker,
  judgeCompletion,
  renderFcmpView,
  renderMarkdownView,
  renderRaspView,
  translateRaspToFcmp,
  type ExitedData,
} from '../../src/translate/index.js';

const DIR = new URL('../../fixtures/streams/codex/', import.meta.url);
const SNAPSHOTS = '../../fixtures/streams/codex/__snapshots__';
const RUN_ID = '20250601T100000-codex-0a1b2c3d';
const TERMINALS = new Set(['conversation.completed', 'conversation.failed', 'user.input.required']);

interface StreamCase {
  name: string;
  stdout: string;
  stderr?: string;
  exit?: Partial<ExitedData>;
  launch?: 'start' | 'resume';
  replyText?: string;
  sessionId?: string;
  seqStart?: number;
  attempt?: number;
  /** Terminal FCMP type and, for failures, the category. */
  expected: [string, string?];
}

const CASES: StreamCase[] = [
  { name: 'turn1', stdout: 'turn1.stdout.jsonl', expected: ['user.input.required'] },
  {
    name: 'turn2-resume',
    stdout: 'turn2-resume.stdout.jsonl',
    launch: 'resume',
    attempt: 2,
    seqStart: 3,
    replyText: 'append again',
    sessionId: '01a2053b-9f5a-7bc0-b066-eb965712ebee',
    expected: ['user.input.required'],
  },
  {
    name: 'truncated',
    stdout: 'truncated.stdout.jsonl',
    exit: { exit_code: null, signal: 'SIGKILL' },
    expected: ['conversation.failed', 'engine_crash'],
  },
  {
    name: 'truncated-timeout',
    stdout: 'truncated.stdout.jsonl',
    exit: { exit_code: null, signal: 'SIGTERM', timed_out: true },
    expected: ['conversation.failed', 'timeout'],
  },
  {
    name: 'truncated-canceled',
    stdout: 'truncated.stdout.jsonl',
    exit: { exit_code: null, signal: 'SIGINT', canceled: true },
    expected: ['conversation.failed', 'canceled'],
  },
  {
    name: 'turn-failed-429',
    stdout: 'turn-failed-429.stdout.jsonl',
    exit: { exit_code: 1 },
    expected: ['conversation.failed', 'rate_limit'],
  },
  { name: 'noise', stdout: 'noise.stdout.jsonl', expected: ['user.input.required'] },
  { name: 'reconnect-then-success', stdout: 'reconnect-then-success.stdout.jsonl', expected: ['user.input.required'] },
  { name: 'done-marker', stdout: 'done-marker.stdout.jsonl', expected: ['conversation.completed'] },
  { name: 'file-change', stdout: 'file-change.stdout.jsonl', expected: ['conversation.completed'] },
  { name: 'crlf', stdout: 'crlf.stdout.jsonl', expected: ['user.input.required'] },
  { name: 'multibyte', stdout: 'multibyte.stdout.jsonl', expected: ['user.input.required'] },
  { name: 'model-metadata-warning', stdout: 'model-metadata-warning.stdout.jsonl', expected: ['user.input.required'] },
  // codex exits 0 here: the verdict comes from the events.
  { name: 'empty-turn', stdout: 'empty-turn.stdout.jsonl', expected: ['conversation.failed', 'engine_crash'] },
  {
    name: 'crash-with-stderr',
    stdout: 'empty-turn.stdout.jsonl',
    stderr: 'stderr-errors.stderr.log',
    exit: { exit_code: 1 },
    expected: ['conversation.failed', 'engine_crash'],
  },
];

interface PipelineResult {
  rasp: RaspEvent[];
  fcmp: FcmpEvent[];
  bytes: Record<StreamName, Buffer>;
}

/** Feeds a fixture through line splitter → RASP builder → FCMP, in chunks of `chunkSize` bytes (0 = whole). */
function runCase(c: StreamCase, chunkSize = 0, parser: EngineParser = createCodexParser()): PipelineResult {
  const bytes: Record<StreamName, Buffer> = {
    stdout: readFileSync(new URL(c.stdout, DIR)),
    stderr: c.stderr ? readFileSync(new URL(c.stderr, DIR)) : Buffer.alloc(0),
    pty: Buffer.alloc(0),
  };
  let tick = Date.parse('2025-06-01T10:00:00.000Z');
  const attempt = c.attempt ?? 1;
  const builder = createRaspBuilder({
    runId: RUN_ID,
    attempt,
    engine: 'codex',
    parser,
    now: () => new Date((tick += 1)),
  });
  builder.started({
    launch: c.launch ?? 'start',
    argv: ['exec', '--json', 'prompt'],
    cwd: '/run',
    pid: 4242,
    io: 'split',
  });
  const splitter = createLineSplitter();
  for (const stream of ['stdout', 'stderr'] as const) {
    const data = bytes[stream];
    const size = chunkSize > 0 ? chunkSize : Math.max(data.length, 1);
    for (let at = 0; at < data.length; at += size) {
      for (const line of splitter.push(stream, data.subarray(at, at + size), at)) {
        builder.line(line.stream, line.text, { stream: line.stream, from: line.from, to: line.to });
      }
    }
  }
  for (const line of splitter.flush())
    builder.line(line.stream, line.text, { stream: line.stream, from: line.from, to: line.to });
  builder.exited({ exit_code: 0, signal: null, timed_out: false, canceled: false, duration_ms: 1234, ...c.exit });
  const rasp = [...builder.events];
  const fcmp = translateRaspToFcmp(rasp, {
    runId: RUN_ID,
    engine: 'codex',
    attempt,
    seqStart: c.seqStart ?? 0,
    launch: c.launch ?? 'start',
    errorPatterns: codexFacts.errorPatterns,
    replyText: c.replyText ?? null,
    sessionId: c.sessionId ?? null,
  });
  return { rasp, fcmp, bytes };
}

/** Golden normalizer: timestamps are the only nondeterministic field. */
const normalize = (jsonl: string): string => jsonl.replace(/"ts":"[^"]*"/g, '"ts":"<ts>"');
const jsonl = (values: readonly unknown[]): string => normalize(values.map((v) => `${JSON.stringify(v)}\n`).join(''));

function stripTerminator(bytes: Buffer): string {
  return bytes
    .toString('utf8')
    .replace(/\r?\n$/, '')
    .replace(/\r$/, '');
}

function assertInvariants({ rasp, fcmp, bytes }: PipelineResult, c: StreamCase): void {
  rasp.forEach((event, i) => {
    expect(RaspEventSchema.safeParse(event).success, JSON.stringify(event)).toBe(true);
    expect(event.seq).toBe(i + 1);
  });
  // raw_ref points at the bytes of the line; raw lines of a stream tile it from 0 to its length.
  const rawLines = rasp.filter((e) => e.data.type === 'raw.line');
  for (const stream of ['stdout', 'stderr'] as const) {
    let cursor = 0;
    for (const event of rawLines.filter((e) => e.raw_ref?.stream === stream)) {
      const ref = event.raw_ref!;
      expect(ref.from).toBe(cursor);
      expect(event.data.type === 'raw.line' && event.data.text).toBe(
        stripTerminator(bytes[stream].subarray(ref.from, ref.to)),
      );
      cursor = ref.to;
    }
    expect(cursor).toBe(bytes[stream].length);
  }
  for (const event of rasp.filter((e) => e.raw_ref && e.data.type !== 'raw.line')) {
    expect(
      rawLines.some((raw) => JSON.stringify(raw.raw_ref) === JSON.stringify(event.raw_ref) && raw.seq < event.seq),
    ).toBe(true);
  }

  fcmp.forEach((event, i) => {
    expect(FcmpEventSchema.safeParse(event).success, JSON.stringify(event)).toBe(true);
    expect(event.seq).toBe((c.seqStart ?? 0) + i + 1);
    if (event.raw_ref) expect(rasp.some((r) => JSON.stringify(r.raw_ref) === JSON.stringify(event.raw_ref))).toBe(true);
  });
  expect(fcmp[0].type).toBe('conversation.started');
  const terminals = fcmp.filter((e) => TERMINALS.has(e.type));
  expect(terminals).toHaveLength(1);
  expect(fcmp.at(-1)).toBe(terminals[0]);
  const finals = fcmp.flatMap((e) => (e.type === 'assistant.message.final' ? [e.data.message_id] : []));
  expect(new Set(finals).size).toBe(finals.length);
  // session_id is null until the engine announced one (unless the attempt resumes a known session).
  const firstSession = fcmp.findIndex((e) => e.session_id !== null);
  if (!c.sessionId && firstSession >= 0)
    expect(fcmp.slice(0, firstSession).every((e) => e.session_id === null)).toBe(true);
}

describe('codex streams: line splitter → RASP → FCMP (golden)', () => {
  it.each(CASES)('$name', async (c) => {
    const result = runCase(c);
    assertInvariants(result, c);
    const terminal = result.fcmp.at(-1)!;
    expect(terminal.type).toBe(c.expected[0]);
    if (c.expected[1]) expect(terminal.type === 'conversation.failed' && terminal.data.category).toBe(c.expected[1]);

    // Chunking must not change anything: lines and multibyte characters split across chunks.
    for (const size of [1, 3, 7]) {
      const chunked = runCase(c, size);
      assertInvariants(chunked, c);
      expect(jsonl(chunked.rasp)).toBe(jsonl(result.rasp));
    }

    await expect(jsonl(result.rasp)).toMatchFileSnapshot(`${SNAPSHOTS}/${c.name}.rasp.jsonl`);
    await expect(jsonl(result.fcmp)).toMatchFileSnapshot(`${SNAPSHOTS}/${c.name}.fcmp.jsonl`);
    await expect(renderMarkdownView(result.fcmp)).toMatchFileSnapshot(`${SNAPSHOTS}/${c.name}.md`);
  });

  it('continues FCMP seq across attempts and records the reply of a resume', () => {
    const first = runCase(CASES[0]);
    const second = runCase({ ...CASES[1], seqStart: first.fcmp.at(-1)!.seq });
    expect(second.fcmp[0].seq).toBe(first.fcmp.at(-1)!.seq + 1);
    expect(second.fcmp.slice(0, 2).map((e) => e.type)).toEqual(['conversation.started', 'user.input.replied']);
    expect(second.fcmp[1].type === 'user.input.replied' && second.fcmp[1].data.text).toBe('append again');
    expect(second.fcmp.every((e) => e.session_id === '01a2053b-9f5a-7bc0-b066-eb965712ebee')).toBe(true);
    expect(first.fcmp[0].session_id).toBeNull();
  });

  it('classifies a failed turn with the error-pattern table', () => {
    const terminal = runCase(CASES.find((c) => c.name === 'turn-failed-429')!).fcmp.at(-1)!;
    expect(terminal).toMatchObject({
      type: 'conversation.failed',
      data: {
        category: 'rate_limit',
        code: 'ENGINE_RATE_LIMITED',
        message: 'exceeded retry limit, last status: 429 Too Many Requests',
      },
    });
  });
});

describe('createLineSplitter', () => {
  const push = (chunks: Array<string | Buffer>) => {
    const splitter = createLineSplitter();
    const lines = chunks.flatMap((chunk) =>
      splitter.push('stdout', typeof chunk === 'string' ? Buffer.from(chunk) : chunk),
    );
    return [...lines, ...splitter.flush()];
  };

  it('strips \\n and a trailing \\r and reports byte offsets past the terminator', () => {
    expect(push(['a\r\nbb\n', '\nc'])).toEqual([
      { stream: 'stdout', text: 'a', from: 0, to: 3 },
      { stream: 'stdout', text: 'bb', from: 3, to: 6 },
      { stream: 'stdout', text: '', from: 6, to: 7 },
      { stream: 'stdout', text: 'c', from: 7, to: 8 },
    ]);
  });

  it('joins a line split across chunks and decodes a multibyte character cut in half', () => {
    const bytes = Buffer.from('{"t":"🎉é"}\n');
    const lines = push([bytes.subarray(0, 8), bytes.subarray(8, 9), bytes.subarray(9)]);
    expect(lines).toEqual([{ stream: 'stdout', text: '{"t":"🎉é"}', from: 0, to: bytes.length }]);
  });

  it('keeps streams apart and honours explicit chunk offsets', () => {
    const splitter = createLineSplitter();
    expect(splitter.push('stdout', Buffer.from('out'), 0)).toEqual([]);
    expect(splitter.push('stderr', Buffer.from('err\n'), 100)).toEqual([
      { stream: 'stderr', text: 'err', from: 100, to: 104 },
    ]);
    expect(splitter.push('stdout', Buffer.from('put\n'), 3)).toEqual([
      { stream: 'stdout', text: 'output', from: 0, to: 7 },
    ]);
    expect(splitter.flush()).toEqual([]);
  });

  it('ends a pending line at a gap in the offsets', () => {
    const splitter = createLineSplitter();
    splitter.push('stdout', Buffer.from('ab'), 0);
    expect(splitter.push('stdout', Buffer.from('cd\n'), 10)).toEqual([
      { stream: 'stdout', text: 'ab', from: 0, to: 2 },
      { stream: 'stdout', text: 'cd', from: 10, to: 13 },
    ]);
  });
});

describe('createRaspBuilder', () => {
  const base = { runId: RUN_ID, attempt: 1, engine: 'codex' as const };

  it('streams events through onEvent with seq from 1 and the raw_ref on parsed events', () => {
    const seen: RaspEvent[] = [];
    const builder = createRaspBuilder({ ...base, parser: createCodexParser(), onEvent: (e) => seen.push(e) });
    builder.line('stdout', '{"type":"turn.started"}', { stream: 'stdout', from: 0, to: 24 });
    builder.diagnostic({ code: 'PTY_FALLBACK_USED', message: 'no pty', level: 'warning' });
    expect(seen.map((e) => [e.seq, e.data.type, e.raw_ref?.to ?? null])).toEqual([
      [1, 'raw.line', 24],
      [2, 'engine.turn.started', 24],
      [3, 'diagnostic', null],
    ]);
    expect(builder.events).toEqual(seen);
  });

  it('turns a throwing parser and (checked) invalid parser output into diagnostics', () => {
    const parser: EngineParser = {
      line: () => {
        throw new Error('boom');
      },
      end: () => [{ type: 'engine.session', session_id: '' }],
    };
    const builder = createRaspBuilder({ ...base, parser: checkedParser(parser, base.engine) });
    builder.line('stdout', 'x', null);
    builder.exited({ exit_code: 0, signal: null, timed_out: false, canceled: false, duration_ms: 1 });
    const codes = builder.events.flatMap((e) => (e.data.type === 'diagnostic' ? [e.data.diagnostic.code] : []));
    expect(codes).toEqual(['PARSER_THREW', 'PARSER_OUTPUT_INVALID']);
    for (const event of builder.events) expect(RaspEventSchema.safeParse(event).success).toBe(true);
  });
});

describe('completion', () => {
  it.each([
    [`done ${DONE_MARKER}`, true],
    ['{"__skill_done__": true}', true],
    ['```json\n{\n  "result": 1,\n  "__skill_done__" : true\n}\n```', true],
    ['{"__skill_done__": false}', false],
    ['__skill_done__', false],
    ['DONE', false],
  ])('hasDoneMarker(%j) = %s', (text, expected) => {
    expect(hasDoneMarker(text)).toBe(expected);
  });

  const exitOk = {
    type: 'lifecycle.exited',
    exit_code: 0,
    signal: null,
    timed_out: false,
    canceled: false,
    duration_ms: 5,
  } as const;
  const events = (...data: RaspEvent['data'][]): RaspEvent[] =>
    data.map((d, i) => ({
      protocol_version: 'rasp/1.0',
      run_id: RUN_ID,
      attempt: 1,
      seq: i + 1,
      ts: '2025-06-01T10:00:00.000Z',
      engine: 'codex',
      data: d,
      raw_ref: null,
    }));
  const judge = (...data: RaspEvent['data'][]) =>
    judgeCompletion(events(...data), { errorPatterns: codexFacts.errorPatterns });

  it('does not fail a completed turn on non-fatal errors alone', () => {
    const verdict = judge(
      { type: 'engine.error', message: 'Reconnecting... 429', fatal: false },
      { type: 'engine.turn.end', status: 'completed', error: null },
      exitOk,
    );
    expect(verdict).toMatchObject({ state: 'awaiting_input', reason: 'turn_end_without_done_marker' });
  });

  it('fails on a fatal engine error, categorized by the table', () => {
    const verdict = judge({ type: 'engine.error', message: 'unexpected status 401 Unauthorized', fatal: true }, exitOk);
    expect(verdict).toMatchObject({ state: 'failed', failure: { category: 'auth', code: 'ENGINE_AUTH_FAILED' } });
  });

  it('defaults an unrecognized failure to category unknown, code ENGINE_TURN_FAILED', () => {
    const verdict = judge({ type: 'engine.turn.end', status: 'failed', error: 'weird' }, exitOk);
    expect(verdict.failure).toEqual({ category: 'unknown', code: 'ENGINE_TURN_FAILED', message: 'weird' });
  });

  it('is unknown while the process has not exited and no turn ended', () => {
    expect(judge({ type: 'engine.turn.started' }).state).toBe('unknown');
  });
});

describe('views', () => {
  const { rasp, fcmp } = runCase(CASES.find((c) => c.name === 'done-marker')!);

  it('view 1 leaves raw lines out, view 2 is one JSON line per FCMP event', () => {
    const view1 = renderRaspView(rasp)
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line) as RaspEvent);
    expect(view1.length).toBe(rasp.filter((e) => e.data.type !== 'raw.line').length);
    expect(view1.some((e) => e.data.type === 'raw.line')).toBe(false);
    expect(
      renderFcmpView(fcmp)
        .trimEnd()
        .split('\n')
        .map((line) => JSON.parse(line)),
    ).toEqual(fcmp);
  });

  it('view 3 shows tool calls and keeps multi-line messages inside their list item', () => {
    expect(renderMarkdownView(fcmp)).toBe(
      [
        '### Simulated Frontend View (Markdown)',
        '',
        '- Tool call: shell command_execution: echo hi > out.txt',
        '- Tool result: completed, exit 0',
        '- Assistant: Wrote out.txt.',
        '',
        '  ```json',
        '  {"__skill_done__": true}',
        '  ```',
        '- System: conversation completed (done_marker)',
        '',
      ].join('\n'),
    );
  });
});
