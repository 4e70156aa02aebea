/**
 * The incremental translation agrees with the array one it replaced, exactly: the completion judge and the FCMP
 * translator fed one event at a time give the verdict and the events of the frozen pre-incremental implementations
 * (tests/helpers/reference-translate.ts) on every fixture stream and on random event sequences; the streamed
 * recorded translation gives the events, verdict and summary of the in-memory one on random recordings of every
 * engine, in random chunks, with and without a PTY capture; the streamed views are the rendered ones.
 */
import fs from 'node:fs';
import path from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { EngineAdapter } from '../../src/engines/engine.js';
import { codexEngine } from '../../src/engines/codex/index.js';
import { codexFacts } from '../../src/engines/codex/facts.js';
import { engineIds, loadEngine, loadTranslationAdapter } from '../../src/engines/registry.js';
import { RASP_VERSION, type FcmpEvent, type RaspData, type RaspEvent } from '../../src/protocol/index.js';
import {
  MAX_SUMMARY_DIAGNOSTICS,
  SUMMARY_DIAGNOSTICS_TRUNCATED,
  createCompletionJudge,
  createFcmpTranslator,
  createViewWriter,
  judgeCompletion,
  renderTranslateView,
  translateRaspToFcmp,
  translateRecorded,
  translateRecordedStreams,
  type ExitedData,
  type FcmpTranslateOptions,
  type RecordedOutput,
  type RecordedSources,
} from '../../src/translate/index.js';
import { referenceJudgeCompletion, referenceTranslateRaspToFcmp } from '../helpers/reference-translate.js';

const STREAMS = path.resolve(import.meta.dirname, '..', '..', 'fixtures', 'streams');
/** Every registered engine (each has fixture streams in fixtures/streams/<id>/). */
const ENGINES: EngineAdapter[] = await Promise.all(engineIds().map(loadEngine));
fc.configureGlobal(process.env.FC_SEED === 'random' ? {} : { seed: Number(process.env.FC_SEED ?? 20261123) });

/** Every fixture recording of `engine`: files grouped by their name before `.stdout`/`.stderr`/`.pty`. */
function fixtureRecordings(engine: string): Array<[string, RecordedOutput]> {
  const dir = path.join(STREAMS, engine);
  const byName = new Map<string, RecordedOutput>();
  for (const file of fs.readdirSync(dir)) {
    const match = /^(.+)\.(stdout|stderr|pty)\.(?:jsonl|log)$/.exec(file);
    if (!match) continue;
    const output = byName.get(match[1]!) ?? {};
    output[match[2] as keyof RecordedOutput] = fs.readFileSync(path.join(dir, file));
    byName.set(match[1]!, output);
  }
  return [...byName];
}

const EXITS: Array<ExitedData | null> = [
  null,
  { exit_code: 0, signal: null, timed_out: false, canceled: false, duration_ms: 10 },
  { exit_code: 1, signal: null, timed_out: false, canceled: false, duration_ms: 10 },
  { exit_code: null, signal: 'SIGKILL', timed_out: false, canceled: false, duration_ms: 10 },
  { exit_code: null, signal: 'SIGTERM', timed_out: true, canceled: false, duration_ms: 10 },
  { exit_code: null, signal: 'SIGINT', timed_out: false, canceled: true, duration_ms: 10 },
];

/** The incremental translator fed one event at a time, then finished. */
function incrementally(rasp: readonly RaspEvent[], options: FcmpTranslateOptions): FcmpEvent[] {
  const translator = createFcmpTranslator(options);
  const out: FcmpEvent[] = [];
  for (const event of rasp) out.push(...translator.push(event));
  out.push(...translator.finish());
  return out;
}

function judgedIncrementally(rasp: readonly RaspEvent[], options: Parameters<typeof judgeCompletion>[1]) {
  const judge = createCompletionJudge(options);
  for (const event of rasp) judge.observe(event);
  return judge.verdict();
}

/** Every way the translator can be asked, against the reference. */
function expectSameAsReference(rasp: readonly RaspEvent[], engine: EngineAdapter): void {
  for (const expectSession of [undefined, true, false]) {
    const options = { errorPatterns: engine.errorPatterns, ...(expectSession === undefined ? {} : { expectSession }) };
    const expected = referenceJudgeCompletion(rasp, options);
    expect(judgeCompletion(rasp, options)).toEqual(expected);
    expect(judgedIncrementally(rasp, options)).toEqual(expected);
  }
  const base: FcmpTranslateOptions = {
    runId: 'r',
    engine: engine.id,
    attempt: 2,
    seqStart: 7,
    launch: 'start',
    errorPatterns: engine.errorPatterns,
    now: () => new Date(0),
  };
  const variants: FcmpTranslateOptions[] = [
    base,
    { ...base, launch: 'resume', replyText: 'go on', sessionId: 'prior-session' },
    { ...base, expectSession: false },
    { ...base, judgement: referenceJudgeCompletion(rasp, { errorPatterns: [] }) },
  ];
  for (const options of variants) {
    const expected = referenceTranslateRaspToFcmp(rasp, options);
    expect(translateRaspToFcmp(rasp, options)).toEqual(expected);
    expect(incrementally(rasp, options)).toEqual(expected);
    if (engine.turnScopedIds) expect(incrementally(rasp, { ...options, turnScopedIds: true })).toEqual(expected);
  }
}

describe('incremental judge and FCMP translator', () => {
  it.each(ENGINES.map((engine) => [engine.id, engine] as const))(
    'match the reference on every %s fixture stream, for every exit',
    (_id, engine) => {
      const recordings = fixtureRecordings(engine.id);
      expect(recordings.length).toBeGreaterThan(0);
      for (const [, output] of recordings) {
        for (const exit of EXITS) expectSameAsReference(translateRecorded(engine, output, { exit }).rasp, engine);
      }
    },
  );

  it('match the reference on random event sequences', () => {
    const id = fc.constantFrom('a', 'b', 'c');
    const message = fc.constantFrom(
      'rate limit exceeded (429)',
      'Reconnecting... 1/5',
      'unauthorized: 401',
      'boom',
      'context length exceeded',
      '',
    );
    const data: fc.Arbitrary<RaspData> = fc.oneof(
      fc.record({ type: fc.constant('engine.session' as const), session_id: fc.constantFrom('s1', 's2') }),
      fc.record({
        type: fc.constant('engine.assistant.message' as const),
        message_id: id,
        text: fc.constantFrom('hi', 'done __SKILL_DONE__', '{"__skill_done__": true}'),
        final: fc.boolean(),
      }),
      fc.record({
        type: fc.constant('engine.tool.call' as const),
        call_id: id,
        kind: fc.constantFrom('shell' as const, 'mcp' as const, 'other' as const),
        name: fc.constant('n'),
        input: fc.constantFrom<unknown>({ command: "bash -lc 'ls'" }, 'x', undefined, { cmd: ['sh', '-c', 'echo'] }),
      }),
      fc.record({
        type: fc.constant('engine.tool.result' as const),
        call_id: id,
        status: fc.constantFrom('completed' as const, 'failed' as const, 'declined' as const),
        output: fc.constantFrom<string | null>(null, 'ok', 'Exit code 2'),
        exit_code: fc.constantFrom<number | null>(null, 0, 3),
      }),
      fc.record({ type: fc.constant('engine.turn.started' as const) }),
      fc.record({
        type: fc.constant('engine.turn.end' as const),
        status: fc.constantFrom('completed' as const, 'failed' as const),
        error: fc.option(message, { nil: null }),
      }),
      fc.record({ type: fc.constant('engine.error' as const), message, fatal: fc.boolean() }),
      fc.record({
        type: fc.constant('diagnostic' as const),
        diagnostic: fc.record({
          code: fc.constantFrom('ENGINE_STDERR', 'OTHER'),
          message,
          level: fc.constant('info' as const),
        }),
      }),
      fc.record({
        type: fc.constant('lifecycle.exited' as const),
        exit_code: fc.constantFrom<number | null>(0, 1, null),
        signal: fc.constantFrom<string | null>(null, 'SIGKILL'),
        timed_out: fc.boolean(),
        canceled: fc.boolean(),
        duration_ms: fc.nat(5000),
      }),
    );
    fc.assert(
      fc.property(fc.array(fc.tuple(data, fc.option(fc.nat(50), { nil: null })), { maxLength: 25 }), (items) => {
        const rasp: RaspEvent[] = items.map(([d, from], i) => ({
          protocol_version: RASP_VERSION,
          run_id: 'r',
          attempt: 1,
          seq: i + 1,
          ts: new Date(1_000 + i).toISOString(),
          engine: 'codex',
          data: d,
          raw_ref: from === null ? null : { stream: 'stdout', from, to: from + 1 },
        }));
        expectSameAsReference(rasp, { ...codexEngine, errorPatterns: codexFacts.errorPatterns, turnScopedIds: false });
      }),
      { numRuns: 300 },
    );
  });
});

/** A recorded stream as a source of chunks of the given sizes (cycled). */
function chunked(bytes: Uint8Array, sizes: readonly number[]): () => AsyncIterable<Uint8Array> {
  return async function* chunks() {
    for (let at = 0, i = 0; at < bytes.length; i += 1) {
      const size = sizes[i % sizes.length]!;
      yield bytes.subarray(at, at + size);
      at += size;
    }
  };
}

const withoutTs = <T extends { ts: string }>(events: readonly T[]): Array<Omit<T, 'ts'>> =>
  events.map(({ ts: _ts, ...rest }) => rest);

/** Streams `output` and compares everything with the in-memory translation. */
async function expectStreamedAsInMemory(
  engine: EngineAdapter,
  output: RecordedOutput,
  sizes: readonly number[],
  exit: ExitedData | null = null,
): Promise<void> {
  const options = { runId: 'rec', seqStart: 3, exit };
  const expected = translateRecorded(engine, output, options);
  const sources: RecordedSources = {};
  for (const stream of ['stdout', 'stderr', 'pty'] as const)
    if (output[stream]) sources[stream] = chunked(output[stream]!, sizes);
  const rasp: RaspEvent[] = [];
  const fcmp: FcmpEvent[] = [];
  const streamed = await translateRecordedStreams(engine, sources, options, {
    rasp: (e) => rasp.push(e),
    fcmp: (e) => fcmp.push(e),
  });
  expect(withoutTs(rasp)).toEqual(withoutTs(expected.rasp.filter((e) => e.data.type !== 'raw.line')));
  expect(withoutTs(fcmp)).toEqual(withoutTs(expected.fcmp));
  expect(streamed.judgement).toEqual(expected.judgement);
  expect(streamed.summary).toEqual(expected.summary);
}

describe('streamed recorded translation', () => {
  it.each(ENGINES.map((engine) => [engine.id, engine] as const))(
    'gives the in-memory translation of every %s fixture, in any chunks',
    async (_id, engine) => {
      for (const [, output] of fixtureRecordings(engine.id)) {
        for (const sizes of [[1 << 20], [1], [7, 3, 64]]) await expectStreamedAsInMemory(engine, output, sizes);
        await expectStreamedAsInMemory(engine, output, [5], EXITS[2]!);
      }
    },
  );

  it.each(ENGINES.map((engine) => [engine.id, engine] as const))(
    'gives the in-memory translation of random %s recordings (PTY fallback included)',
    async (_id, engine) => {
      const real = fixtureRecordings(engine.id).flatMap(([, output]) =>
        Object.values(output).flatMap((bytes) => Buffer.from(bytes).toString('utf8').split('\n')),
      );
      const line = fc.oneof(
        { weight: 4, arbitrary: fc.constantFrom(...real) },
        {
          weight: 1,
          arbitrary: fc
            .tuple(fc.constantFrom(...real), fc.nat())
            .map(([l, n]) => l.slice(0, n % Math.max(l.length, 1))),
        },
        { weight: 1, arbitrary: fc.string({ maxLength: 30 }) },
      );
      const bytes = fc.array(line, { maxLength: 20 }).map((lines) => Buffer.from(lines.join('\n')));
      await fc.assert(
        fc.asyncProperty(
          fc.option(bytes),
          fc.option(bytes),
          fc.option(bytes),
          fc.array(fc.integer({ min: 1, max: 50 }), { minLength: 1, maxLength: 4 }),
          async (stdout, stderr, pty, sizes) => {
            const output: RecordedOutput = {
              ...(stdout ? { stdout } : {}),
              ...(stderr ? { stderr } : {}),
              ...(pty ? { pty } : {}),
            };
            await expectStreamedAsInMemory(engine, output, sizes);
          },
        ),
        { numRuns: 60 },
      );
    },
  );

  it('forgets codex ids only where they cannot come again (items before the first turn share turn 1)', async () => {
    const msg = (id: string, text: string) =>
      `{"type":"item.completed","item":{"id":"${id}","type":"agent_message","text":"${text}"}}`;
    const cmd = (phase: string, id: string) =>
      `{"type":"item.${phase}","item":{"id":"${id}","type":"command_execution","command":"ls","aggregated_output":"x","exit_code":${phase === 'completed' ? 0 : null},"status":"${phase === 'completed' ? 'completed' : 'in_progress'}"}}`;
    const turnEnd = '{"type":"turn.completed","usage":{"input_tokens":1,"output_tokens":1}}';
    const lines = [
      '{"type":"thread.started","thread_id":"t"}',
      msg('item_0', 'before'),
      cmd('started', 'item_1'),
      '{"type":"turn.started"}',
      msg('item_0', 'again in turn 1'),
      cmd('completed', 'item_1'),
      cmd('started', 'item_1'),
      turnEnd,
      '{"type":"turn.started"}',
      msg('item_0', 'turn 2'),
      msg('item_0', 'turn 2 again'),
      cmd('started', 'item_1'),
      cmd('completed', 'item_1'),
      turnEnd,
      '{"type":"turn.started"}',
      cmd('completed', 'item_1'),
      msg('item_0', 'turn 3'),
      turnEnd,
    ];
    const stdout = Buffer.from(`${lines.join('\n')}\n`);
    await expectStreamedAsInMemory(codexEngine, { stdout }, [64]);
    const { summary } = await translateRecordedStreams(codexEngine, { stdout: chunked(stdout, [64]) });
    expect(summary.tool_calls).toBe(3);
    const rasp = translateRecorded(codexEngine, { stdout }).rasp;
    // The parser announces each call once: item_1#1 (begun before the first turn), item_1#2, item_1#3.
    expect(rasp.flatMap(({ data }) => (data.type === 'engine.tool.call' ? [data.call_id] : []))).toEqual([
      'item_1#1',
      'item_1#2',
      'item_1#3',
    ]);
    expect(
      incrementally(rasp, {
        runId: 'r',
        engine: 'codex',
        attempt: 1,
        seqStart: 0,
        launch: 'start',
        errorPatterns: codexFacts.errorPatterns,
        turnScopedIds: true,
      }),
    ).toEqual(
      referenceTranslateRaspToFcmp(rasp, {
        runId: 'r',
        engine: 'codex',
        attempt: 1,
        seqStart: 0,
        launch: 'start',
        errorPatterns: codexFacts.errorPatterns,
      }),
    );
  });

  it('lists at most MAX_SUMMARY_DIAGNOSTICS diagnostics and says how many more there were', async () => {
    const garbage = Buffer.from('not json\n'.repeat(MAX_SUMMARY_DIAGNOSTICS + 5));
    const { summary } = await translateRecordedStreams(codexEngine, { stdout: chunked(garbage, [4096]) });
    expect(summary.diagnostics).toHaveLength(MAX_SUMMARY_DIAGNOSTICS + 1);
    expect(summary.diagnostics.at(-1)).toEqual({
      code: SUMMARY_DIAGNOSTICS_TRUNCATED,
      message: expect.stringContaining('5 more diagnostics'),
    });
    const few = await translateRecordedStreams(codexEngine, { stdout: chunked(Buffer.from('not json\n'), [4096]) });
    expect(few.summary.diagnostics.map((d) => d.code)).toEqual(['STREAM_PARSE_ERROR']);
  });

  it('streams views 1, 2 and 3 exactly as they render', async () => {
    for (const [, output] of fixtureRecordings('codex')) {
      const rasp: RaspEvent[] = [];
      const fcmp: FcmpEvent[] = [];
      const texts = { 1: '', 2: '', 3: '' };
      const writers = ([1, 2, 3] as const).map((mode) => createViewWriter(mode, (text) => (texts[mode] += text)));
      const sources: RecordedSources = {};
      for (const stream of ['stdout', 'stderr', 'pty'] as const)
        if (output[stream]) sources[stream] = chunked(output[stream]!, [100]);
      await translateRecordedStreams(
        codexEngine,
        sources,
        {},
        {
          rasp: (e) => {
            rasp.push(e);
            for (const w of writers) w.sink.rasp?.(e);
          },
          fcmp: (e) => {
            fcmp.push(e);
            for (const w of writers) w.sink.fcmp?.(e);
          },
        },
      );
      for (const w of writers) w.end();
      for (const mode of [1, 2, 3] as const) expect(texts[mode]).toBe(renderTranslateView(mode, { rasp, fcmp }));
    }
  });

  it('loads the same parser, error patterns and id scoping as the full adapters', async () => {
    for (const engine of ENGINES) {
      const adapter = await loadTranslationAdapter(engine.id);
      expect(adapter.errorPatterns).toBe(engine.errorPatterns);
      expect(adapter.createParser).toBe(engine.createParser);
      expect(adapter.turnScopedIds ?? false).toBe(engine.turnScopedIds ?? false);
    }
    await expect(loadTranslationAdapter('nope')).rejects.toMatchObject({ code: 'ENGINE_UNKNOWN' });
  });
});
