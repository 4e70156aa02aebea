/**
 * The protocol check of a parser output: `ParsedEventSchema` and `DiagnosticSchema` (protocol/rasp.ts,
 * protocol/common.ts) decide what a parser may emit, and give the value with only the schema's keys, the diagnostic
 * level defaulted. An output that does not fit becomes a `PARSER_OUTPUT_INVALID` diagnostic, never an exception.
 */
import type { EngineId } from '../protocol/index.js';
import { DiagnosticSchema } from '../protocol/common.js';
import { ParsedEventSchema } from '../protocol/rasp.js';
import type { ParserOutput } from './engine.js';

/** The checked RASP data of a parser output, or a `PARSER_OUTPUT_INVALID` diagnostic when it does not fit the protocol. */
export function checkParserOutput(output: ParserOutput, engine: EngineId): ParserOutput {
  if (output.type === 'diagnostic') {
    const parsed = DiagnosticSchema.safeParse(output.diagnostic);
    if (parsed.success) return { type: 'diagnostic', diagnostic: parsed.data };
  } else {
    const parsed = ParsedEventSchema.safeParse(output);
    if (parsed.success) return parsed.data;
  }
  return invalidOutput(output, engine);
}

/** The `PARSER_OUTPUT_INVALID` diagnostic of an output that does not fit the protocol. */
export function invalidOutput(output: ParserOutput, engine: EngineId): ParserOutput {
  let shown: string;
  try {
    shown = String(JSON.stringify(output)).slice(0, 200);
  } catch {
    shown = String(output).slice(0, 200);
  }
  return {
    type: 'diagnostic',
    diagnostic: {
      code: 'PARSER_OUTPUT_INVALID',
      message: `the ${engine} parser produced an invalid event: ${shown}`,
      level: 'error',
    },
  };
}
