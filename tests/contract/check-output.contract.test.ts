/**
 * The check of parser outputs (src/engines/check-output.ts): on generated outputs of every type (valid fields,
 * wrong-typed ones, missing and undefined keys, extra keys, NaN, infinities, unsafe integers, arrays where objects
 * belong), whatever the protocol schemas reject becomes a PARSER_OUTPUT_INVALID diagnostic, and nothing throws.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { ParserOutput } from '../../src/engines/engine.js';
import { DiagnosticSchema, ParsedEventSchema, type RaspData } from '../../src/protocol/index.js';
import { checkParserOutput, invalidOutput } from '../../src/engines/check-output.js';
import { codexFacts } from '../../src/engines/codex/facts.js';
import { loadTranslationAdapter, registerEngine } from '../../src/engines/registry.js';
import { createRaspBuilder } from '../../src/translate/rasp-builder.js';
import { exact } from '../helpers/exact.js';

fc.configureGlobal(process.env.FC_SEED === 'random' ? {} : { seed: Number(process.env.FC_SEED ?? 20261123) });

const odd = fc.oneof(
  fc.anything(),
  fc.constantFrom<unknown>(
    undefined,
    null,
    Number.NaN,
    Infinity,
    -Infinity,
    -0,
    2 ** 60,
    1.5,
    -1,
    '',
    [],
    {},
    [1],
    'completed',
    'shell',
    true,
  ),
);
/** A field: mostly valid, sometimes anything. */
const field = <T>(valid: fc.Arbitrary<T>): fc.Arbitrary<unknown> =>
  fc.oneof({ weight: 3, arbitrary: valid }, { weight: 1, arbitrary: odd });
const count = field(fc.oneof(fc.nat(), fc.constant(null)));
const usage = field(
  fc.record(
    { input_tokens: count, output_tokens: count, cached_input_tokens: count, reasoning_output_tokens: count },
    { requiredKeys: [] },
  ),
);
const shapes: Record<string, Record<string, fc.Arbitrary<unknown>>> = {
  'engine.session': { session_id: field(fc.string()) },
  'engine.assistant.message': { message_id: field(fc.string()), text: field(fc.string()), final: field(fc.boolean()) },
  'engine.reasoning': { item_id: field(fc.option(fc.string(), { nil: null })), text: field(fc.string()) },
  'engine.tool.call': {
    call_id: field(fc.string()),
    kind: field(fc.constantFrom('shell', 'file_change', 'mcp', 'web_search', 'skill', 'other', 'bogus')),
    name: field(fc.string()),
    input: fc.anything(),
  },
  'engine.tool.result': {
    call_id: field(fc.string()),
    status: field(fc.constantFrom('completed', 'failed', 'declined', 'in_progress', 'done')),
    output: field(fc.option(fc.string(), { nil: null })),
    exit_code: field(fc.oneof(fc.integer(), fc.constant(null))),
  },
  'engine.file.change': {
    changes: field(
      fc.array(field(fc.record({ path: field(fc.string()), kind: field(fc.string()) }, { requiredKeys: [] })), {
        maxLength: 3,
      }),
    ),
  },
  'engine.usage': { usage },
  'engine.turn.started': {},
  'engine.turn.end': {
    status: field(fc.constantFrom('completed', 'failed', 'ended')),
    error: field(fc.option(fc.string(), { nil: null })),
  },
  'engine.error': { message: field(fc.string()), fatal: field(fc.boolean()) },
  'engine.skills.offered': {
    skills: field(fc.array(field(fc.string()), { maxLength: 3 })),
    source: field(fc.constantFrom('engine', 'model_request', 'user')),
  },
  'lifecycle.started': {},
  'raw.line': { text: fc.string() },
};

/** An output of a known type (fields present, missing or undefined; extra keys), or of an unknown one. */
const output: fc.Arbitrary<ParserOutput> = fc.oneof(
  ...Object.entries(shapes).map(([type, shape]) =>
    fc
      .tuple(
        fc.record(shape, { requiredKeys: [] }),
        fc.dictionary(fc.string({ maxLength: 6 }), fc.anything(), { maxKeys: 2 }),
        fc.boolean(),
      )
      .map(
        ([fields, extra, extraFirst]) =>
          (extraFirst ? { ...extra, ...fields, type } : { type, ...fields, ...extra }) as unknown as ParserOutput,
      ),
  ),
  fc.record({
    type: fc.constant('diagnostic' as const),
    diagnostic: field(
      fc.record(
        {
          code: field(fc.constantFrom('A', 'ENGINE_STDERR', 'bad-code', '9X', 'X_1')),
          message: field(fc.string()),
          level: field(fc.constantFrom('info', 'warning', 'error', 'fatal')),
        },
        { requiredKeys: [] },
      ),
    ),
  }) as fc.Arbitrary<ParserOutput>,
  fc.string().map((type) => ({ type }) as unknown as ParserOutput),
);

describe('checkParserOutput', () => {
  it('gives a valid output as the schema parses it, and turns anything else into PARSER_OUTPUT_INVALID', () => {
    fc.assert(
      fc.property(output, (value) => {
        const checked = checkParserOutput(value, 'codex');
        const valid =
          value.type === 'diagnostic'
            ? DiagnosticSchema.safeParse(value.diagnostic).success
            : ParsedEventSchema.safeParse(value).success;
        if (valid) expect(checked).not.toMatchObject({ diagnostic: { code: 'PARSER_OUTPUT_INVALID' } });
        else expect(exact(checked)).toBe(exact(invalidOutput(value, 'codex')));
      }),
      { numRuns: 2000 },
    );
  });

  it('gives an object holding only the schema keys, sharing only `input`', () => {
    const input = { command: 'ls' };
    const call = {
      name: 'n',
      extra: 1,
      input,
      call_id: 'c',
      type: 'engine.tool.call',
      kind: 'shell',
    } as unknown as ParserOutput;
    const checked = checkParserOutput(call, 'codex') as Extract<RaspData, { type: 'engine.tool.call' }>;
    expect(Object.keys(checked).sort()).toEqual(['call_id', 'input', 'kind', 'name', 'type']);
    expect(checked).not.toBe(call);
    expect(checked.input).toEqual(input);
  });

  it('checks the parser of an engine registered at run time: an output that does not fit is PARSER_OUTPUT_INVALID in RASP', async () => {
    const invalid = {
      type: 'engine.tool.result',
      call_id: 'c',
      status: 'completed',
      output: null,
      exit_code: 1.5,
    } as unknown as ParserOutput;
    const parser = { line: () => [invalid], end: () => [] };
    const unregister = registerEngine({
      id: 'checkedparser',
      adapter: async () => {
        throw new Error('not used');
      },
      facts: async () => ({
        id: 'checkedparser',
        executableName: 'checkedparser',
        packageName: null,
        liveEnvKeys: [],
        stdin: 'ignore',
        skillRoot: '.checkedparser/skills',
        tools: { engine: 'checkedparser', wire: 'openai-chat', shell: [{ tool: 'run', commandKey: 'cmd' }] },
        errorPatterns: [],
        modelFlag: '-m',
        createParser: () => parser,
      }),
    });
    try {
      const adapter = await loadTranslationAdapter('checkedparser');
      const builder = createRaspBuilder({
        runId: 'r',
        attempt: 1,
        engine: 'checkedparser',
        parser: adapter.createParser(),
      });
      const [, event] = builder.line('stdout', 'x', null);
      expect(event?.data).toMatchObject({
        type: 'diagnostic',
        diagnostic: { code: 'PARSER_OUTPUT_INVALID', level: 'error' },
      });
    } finally {
      unregister();
    }
    // A built-in parser is taken as it is (its property tests prove its outputs are protocol values).
    expect(await loadTranslationAdapter('codex')).toBe(codexFacts);
  });
});
