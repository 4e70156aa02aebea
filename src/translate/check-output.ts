/**
 * The protocol check of a parser output, on the per-line path of every translation. The common event types are
 * checked by hand, exactly as their zod schema would (same accepted values, same output: a fresh object holding
 * only the schema's keys, in the schema's order); anything else, and any value the hand check is not sure of, goes
 * to the zod schema itself, which stays the authority. An output that does not fit becomes a
 * `PARSER_OUTPUT_INVALID` diagnostic. `tests/contract/check-output.contract.test.ts` compares both on random values.
 */
import { DiagnosticSchema, ParsedEventSchema, type Diagnostic, type EngineId, type RaspData, type Usage } from '../protocol/index.js';
import type { ParserOutput } from '../engines/engine.js';

type Data<T extends RaspData['type']> = Extract<RaspData, { type: T }>;

const DIAGNOSTIC_CODE = /^[A-Z][A-Z0-9_]*$/;
const TOOL_KINDS = new Set(['shell', 'file_change', 'mcp', 'web_search', 'skill', 'other']);
const RESULT_STATUSES = new Set(['completed', 'failed', 'declined', 'in_progress']);
const LEVELS = new Set(['info', 'warning', 'error']);

const isString = (value: unknown): value is string => typeof value === 'string';
const isStringOrNull = (value: unknown): value is string | null => value === null || typeof value === 'string';
const isIntOrNull = (value: unknown): value is number | null => value === null || Number.isSafeInteger(value);
const isCountOrNull = (value: unknown): value is number | null => value === null || (Number.isSafeInteger(value) && (value as number) >= 0);

/** The hand check of a diagnostic; undefined when unsure (zod decides). */
function fastDiagnostic(value: unknown): Diagnostic | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const { code, message, level } = value as Record<string, unknown>;
  if (!isString(code) || !isString(message) || !DIAGNOSTIC_CODE.test(code)) return undefined;
  if (level === undefined) return { code, message, level: 'warning' };
  return isString(level) && LEVELS.has(level) ? { code, message, level: level as Diagnostic['level'] } : undefined;
}

/** The hand check of a usage object; undefined when unsure. */
function fastUsage(value: unknown): Usage | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  const u = value as Record<string, unknown>;
  if (!isCountOrNull(u.input_tokens) || !isCountOrNull(u.output_tokens)) return undefined;
  const usage: Usage = { input_tokens: u.input_tokens, output_tokens: u.output_tokens };
  for (const key of ['cached_input_tokens', 'reasoning_output_tokens'] as const) {
    if (!(key in u)) continue;
    const count = u[key];
    if (!isCountOrNull(count)) return undefined;
    usage[key] = count;
  }
  return usage;
}

/** The hand check of a parsed event of a common type; undefined when unsure or of another type. */
function fastParsed(output: Record<string, unknown>): RaspData | undefined {
  switch (output.type) {
    case 'engine.session':
      return isString(output.session_id) && output.session_id.length > 0 ? { type: 'engine.session', session_id: output.session_id } : undefined;
    case 'engine.assistant.message': {
      const { message_id, text, final } = output;
      return isString(message_id) && isString(text) && typeof final === 'boolean' ? { type: 'engine.assistant.message', message_id, text, final } : undefined;
    }
    case 'engine.reasoning': {
      const { item_id, text } = output;
      return isStringOrNull(item_id) && isString(text) ? { type: 'engine.reasoning', item_id, text } : undefined;
    }
    case 'engine.tool.call': {
      const { call_id, kind, name, input } = output;
      if (!isString(call_id) || !isString(kind) || !TOOL_KINDS.has(kind) || !isString(name) || input === undefined) return undefined;
      return { type: 'engine.tool.call', call_id, kind: kind as Data<'engine.tool.call'>['kind'], name, input };
    }
    case 'engine.tool.result': {
      const { call_id, status, output: text, exit_code } = output;
      if (!isString(call_id) || !isString(status) || !RESULT_STATUSES.has(status) || !isStringOrNull(text) || !isIntOrNull(exit_code)) return undefined;
      return { type: 'engine.tool.result', call_id, status: status as Data<'engine.tool.result'>['status'], output: text, exit_code };
    }
    case 'engine.usage': {
      const usage = fastUsage(output.usage);
      return usage ? { type: 'engine.usage', usage } : undefined;
    }
    case 'engine.turn.started':
      return { type: 'engine.turn.started' };
    case 'engine.turn.end': {
      const { status, error } = output;
      return (status === 'completed' || status === 'failed') && isStringOrNull(error) ? { type: 'engine.turn.end', status, error } : undefined;
    }
    case 'engine.error': {
      const { message, fatal } = output;
      return isString(message) && typeof fatal === 'boolean' ? { type: 'engine.error', message, fatal } : undefined;
    }
    default:
      return undefined;
  }
}

/** The checked RASP data of a parser output, or a `PARSER_OUTPUT_INVALID` diagnostic when it does not fit the protocol. */
export function checkParserOutput(output: ParserOutput, engine: EngineId): RaspData {
  if (output.type === 'diagnostic') {
    const fast = fastDiagnostic(output.diagnostic);
    if (fast) return { type: 'diagnostic', diagnostic: fast };
    const parsed = DiagnosticSchema.safeParse(output.diagnostic);
    if (parsed.success) return { type: 'diagnostic', diagnostic: parsed.data };
  } else {
    const fast = typeof output === 'object' && output !== null ? fastParsed(output as unknown as Record<string, unknown>) : undefined;
    if (fast) return fast;
    const parsed = ParsedEventSchema.safeParse(output);
    if (parsed.success) return parsed.data;
  }
  return invalidOutput(output, engine);
}

/** The zod-only check {@link checkParserOutput} must agree with (kept for the tests that prove it does). */
export function checkParserOutputWithSchema(output: ParserOutput, engine: EngineId): RaspData {
  if (output.type === 'diagnostic') {
    const parsed = DiagnosticSchema.safeParse(output.diagnostic);
    if (parsed.success) return { type: 'diagnostic', diagnostic: parsed.data };
  } else {
    const parsed = ParsedEventSchema.safeParse(output);
    if (parsed.success) return parsed.data;
  }
  return invalidOutput(output, engine);
}

function invalidOutput(output: ParserOutput, engine: EngineId): RaspData {
  let shown: string;
  try {
    shown = JSON.stringify(output).slice(0, 200);
  } catch {
    shown = String(output).slice(0, 200);
  }
  return { type: 'diagnostic', diagnostic: { code: 'PARSER_OUTPUT_INVALID', message: `the ${engine} parser produced an invalid event: ${shown}`, level: 'error' } };
}
