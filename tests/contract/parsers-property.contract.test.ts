/**
 * Property tests of every registered engine's parser: fed random, truncated,
 * interleaved and binary input — mixed with real lines of their golden streams so the parsers get past their
 * first checks — a parser never throws, every output is a valid parsed event or diagnostic, non-JSON lines on a
 * JSON stream become diagnostics, and after translation the FCMP invariants hold: seq strictly increasing from
 * the run's previous seq, one final per message id, completed and failed exclusive, exactly one terminal event.
 */
import fs from 'node:fs';
import path from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { EngineAdapter, ParserOutput } from '../../src/engines/engine.js';
import { claudeEngine } from '../../src/engines/claude/index.js';
import { codexEngine } from '../../src/engines/codex/index.js';
import { geminiEngine } from '../../src/engines/gemini/index.js';
import { opencodeEngine } from '../../src/engines/opencode/index.js';
import { engineIds, loadEngine } from '../../src/engines/registry.js';
import {
  DiagnosticSchema,
  FcmpEventSchema,
  ParsedEventSchema,
  type FcmpEvent,
  type StreamName,
} from '../../src/protocol/index.js';
import { translateRecorded } from '../../src/translate/recorded.js';

const STREAMS = path.resolve(import.meta.dirname, '..', '..', 'fixtures', 'streams');
/** Every registered engine (each has golden streams in fixtures/streams/<id>/). */
const ENGINES: EngineAdapter[] = await Promise.all(engineIds().map(loadEngine));
const RUNS = 150;
// A fixed seed keeps CI deterministic; FC_SEED=<n> (or `random`) explores other inputs, and a failure prints its seed.
fc.configureGlobal(process.env.FC_SEED === 'random' ? {} : { seed: Number(process.env.FC_SEED ?? 20261123) });

/** Every line of an engine's golden input streams (not the snapshots). */
function goldenLines(engine: string): string[] {
  const dir = path.join(STREAMS, engine);
  return fs
    .readdirSync(dir)
    .filter((name) => /\.(jsonl|log)$/.test(name))
    .flatMap((name) => fs.readFileSync(path.join(dir, name), 'utf8').split('\n'))
    .filter((line) => line.trim() !== '');
}

/** One input line: a real one, a cut one, random text, random JSON (with a plausible `type`) or raw bytes as text. */
function lineArb(real: string[], types: string[]): fc.Arbitrary<string> {
  const realLine = fc.constantFrom(...real);
  return fc.oneof(
    { weight: 4, arbitrary: realLine },
    {
      weight: 2,
      arbitrary: fc.tuple(realLine, fc.nat()).map(([line, n]) => line.slice(0, n % Math.max(line.length, 1))),
    },
    { weight: 1, arbitrary: fc.string({ unit: 'grapheme', maxLength: 80 }) },
    {
      weight: 2,
      arbitrary: fc
        .tuple(
          fc.constantFrom(...types),
          fc.dictionary(fc.string({ maxLength: 8 }), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 4 }),
        )
        .map(([type, rest]) => JSON.stringify({ ...rest, type })),
    },
    { weight: 1, arbitrary: fc.uint8Array({ maxLength: 60 }).map((bytes) => Buffer.from(bytes).toString('latin1')) },
  );
}

/** The `type` values the engines' streams use, so random objects reach the parsers' branches. */
function typesOf(real: string[]): string[] {
  const types = new Set([
    'result',
    'error',
    'system',
    'assistant',
    'user',
    'message',
    'init',
    'tool_use',
    'tool_result',
  ]);
  for (const line of real) {
    const match = /"type"\s*:\s*"([^"]{1,40})"/.exec(line);
    if (match) types.add(match[1]!);
  }
  return [...types];
}

const streamArb = fc.constantFrom<StreamName>('stdout', 'stdout', 'stderr', 'pty');

/**
 * Each output is a protocol value exactly as the schema makes it (valid, no key beyond the schema's, defaults
 * present, in the schema's key order): the RASP builder takes built-in parsers' outputs unchecked (engines/checked-parser.ts), so this is
 * what stands for the per-event check.
 */
function expectValidOutputs(outputs: ParserOutput[]): void {
  for (const output of outputs) {
    const parsed =
      output.type === 'diagnostic'
        ? DiagnosticSchema.safeParse(output.diagnostic)
        : ParsedEventSchema.safeParse(output);
    expect(parsed.success, JSON.stringify(output)).toBe(true);
    const value = output.type === 'diagnostic' ? output.diagnostic : output;
    expect(value, 'the schema would change this output').toStrictEqual(parsed.data);
    // Key order too: the audit files are this object serialized.
    expect(JSON.stringify(value), 'the schema would reorder its keys').toBe(JSON.stringify(parsed.data));
  }
}

function expectFcmpInvariants(fcmp: FcmpEvent[], seqStart: number): void {
  let last = seqStart;
  const finals = new Set<string>();
  for (const event of fcmp) {
    expect(FcmpEventSchema.safeParse(event).success, JSON.stringify(event)).toBe(true);
    expect(event.seq).toBeGreaterThan(last);
    last = event.seq;
    if (event.type === 'assistant.message.final') {
      expect(finals.has(event.data.message_id), `second final for ${event.data.message_id}`).toBe(false);
      finals.add(event.data.message_id);
    }
  }
  const completed = fcmp.filter((e) => e.type === 'conversation.completed').length;
  const failed = fcmp.filter((e) => e.type === 'conversation.failed').length;
  const awaiting = fcmp.filter((e) => e.type === 'user.input.required').length;
  expect(completed * failed).toBe(0);
  expect(completed + failed + awaiting).toBe(1);
}

describe.each(ENGINES.map((engine) => [engine.id, engine] as const))('%s parser properties', (id, engine) => {
  const real = goldenLines(id);
  const line = lineArb(real, typesOf(real));

  it('never throws on interleaved streams of random, truncated and binary lines; outputs are valid', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(streamArb, line), { maxLength: 40 }), (input) => {
        const parser = engine.createParser();
        const outputs = [...input.flatMap(([stream, text]) => parser.line(stream, text)), ...parser.end()];
        expectValidOutputs(outputs);
      }),
      { numRuns: RUNS },
    );
  });

  it('after translation of random recordings the FCMP invariants hold', () => {
    const bytes = fc
      .array(
        fc.oneof(
          line.map((text) => Buffer.from(`${text}\n`)),
          fc.uint8Array({ maxLength: 40 }).map((b) => Buffer.from(b)),
        ),
        { maxLength: 30 },
      )
      .map((parts) => Buffer.concat(parts));
    fc.assert(
      fc.property(
        fc.option(bytes),
        fc.option(bytes),
        fc.option(bytes),
        fc.nat(1000),
        (stdout, stderr, pty, seqStart) => {
          const output = { ...(stdout ? { stdout } : {}), ...(stderr ? { stderr } : {}), ...(pty ? { pty } : {}) };
          const result = translateRecorded(engine, output, { runId: 'prop', seqStart });
          expectFcmpInvariants(result.fcmp, seqStart);
        },
      ),
      { numRuns: RUNS },
    );
  });
});

// The parsers of JSON-line streams (iflow prints plain text).
describe.each([codexEngine, claudeEngine, geminiEngine, opencodeEngine].map((engine) => [engine.id, engine] as const))(
  '%s: anomalies become diagnostics',
  (_id, engine) => {
    it('a non-JSON, non-blank stdout line yields a diagnostic and no engine event', () => {
      // Lines starting `{` or `[` may open a multi-line document (gemini) and are judged only at the end.
      const garbage = fc.string({ minLength: 1, maxLength: 80 }).filter((s) => s.trim() !== '' && !/^\s*[[{]/.test(s));
      fc.assert(
        fc.property(garbage, (text) => {
          const outputs = engine.createParser().line('stdout', text);
          expect(outputs.length).toBeGreaterThan(0);
          expect(outputs.every((o) => o.type === 'diagnostic')).toBe(true);
        }),
        { numRuns: RUNS },
      );
    });

    it('a cut JSON event never ends the stream as completed', () => {
      // Trimmed: a CRLF golden line cut just before its \r would still be a whole event.
      const real = goldenLines(engine.id)
        .filter((l) => l.startsWith('{"type"'))
        .map((l) => l.trimEnd());
      fc.assert(
        fc.property(fc.constantFrom(...real), fc.nat(), (text, n) => {
          const cut = text.slice(0, 1 + (n % (text.length - 1)));
          const result = translateRecorded(engine, { stdout: Buffer.from(`${cut}\n`) }, { runId: 'prop' });
          expect(result.fcmp.some((e) => e.type === 'conversation.completed')).toBe(false);
          expect(result.summary.diagnostics.length).toBeGreaterThan(0);
        }),
        { numRuns: RUNS },
      );
    });
  },
);
