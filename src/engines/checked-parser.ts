/**
 * A parser whose every output is checked against the protocol (`checkParserOutput`): what the registry hands out
 * for an engine registered at run time, whose parser the project has not tested. The built-in parsers are not
 * wrapped: their outputs are proven to be the protocol's own values (the parsers' property tests check that each
 * output is what the schema would make of it), so the translation of a long recording does not pay a schema check
 * per event (issue 29: `translate` ≥ 150 MB/s).
 */
import type { EngineParser } from './engine.js';
import type { EngineId } from '../protocol/index.js';
import { checkParserOutput } from './check-output.js';

/** `parser` with each output checked: one that does not fit the protocol becomes a `PARSER_OUTPUT_INVALID` diagnostic. */
export function checkedParser(parser: EngineParser, engine: EngineId): EngineParser {
  return {
    line: (stream, text) => parser.line(stream, text).map((output) => checkParserOutput(output, engine)),
    end: () => parser.end().map((output) => checkParserOutput(output, engine)),
  };
}
