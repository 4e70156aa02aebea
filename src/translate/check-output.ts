/**
 * The protocol check of a parser output, on the per-line path of every translation: a hand-written validator of
 * `ParsedEventSchema` and `DiagnosticSchema` (protocol/rasp.ts, protocol/common.ts) that accepts exactly what the
 * schemas accept and gives what they give — a fresh object with only the schema's keys, in the schema's order,
 * the diagnostic level defaulted. Written out rather than run through zod so that a long translation neither pays
 * zod per event nor loads it at all. `tests/contract/check-output.contract.test.ts` holds it to the zod schemas on
 * generated values; a change to those schemas must be mirrored here (that test fails until it is).
 * An output that does not fit becomes a `PARSER_OUTPUT_INVALID` diagnostic.
 */
import type { Diagnostic, EngineId, RaspData, Usage } from '../protocol/index.js';
import type { ParserOutput } from '../engines/engine.js';

type Data<T extends RaspData['type']> = Extract<RaspData, { type: T }>;
type Fields = Record<string, unknown>;

const DIAGNOSTIC_CODE = /^[A-Z][A-Z0-9_]*$/;
const TOOL_KINDS = new Set(['shell', 'file_change', 'mcp', 'web_search', 'skill', 'other']);
const RESULT_STATUSES = new Set(['completed', 'failed', 'declined', 'in_progress']);
const LEVELS = new Set(['info', 'warning', 'error']);

/** What `z.object` accepts as its input. */
const isRecord = (value: unknown): value is Fields => typeof value === 'object' && value !== null && !Array.isArray(value);
const isString = (value: unknown): value is string => typeof value === 'string';
const isStringOrNull = (value: unknown): value is string | null => value === null || typeof value === 'string';
/** `z.number().int()`: a safe integer. */
const isIntOrNull = (value: unknown): value is number | null => value === null || Number.isSafeInteger(value);
/** `z.number().int().nonnegative()`. */
const isCountOrNull = (value: unknown): value is number | null => value === null || (Number.isSafeInteger(value) && (value as number) >= 0);

function checkDiagnostic(value: unknown): Diagnostic | undefined {
  if (!isRecord(value)) return undefined;
  const { code, message, level } = value;
  if (!isString(code) || !DIAGNOSTIC_CODE.test(code) || !isString(message)) return undefined;
  if (level === undefined) return { code, message, level: 'warning' };
  return isString(level) && LEVELS.has(level) ? { code, message, level: level as Diagnostic['level'] } : undefined;
}

function checkUsage(value: unknown): Usage | undefined {
  if (!isRecord(value)) return undefined;
  const { input_tokens, output_tokens } = value;
  if (!isCountOrNull(input_tokens) || !isCountOrNull(output_tokens)) return undefined;
  const usage: Usage = { input_tokens, output_tokens };
  // Optional keys: absent stays absent; present (even as undefined) is kept, as zod does.
  for (const key of ['cached_input_tokens', 'reasoning_output_tokens'] as const) {
    if (!(key in value)) continue;
    const count = value[key];
    if (count !== undefined && !isCountOrNull(count)) return undefined;
    usage[key] = count as number | null | undefined;
  }
  return usage;
}

function checkChanges(value: unknown): Data<'engine.file.change'>['changes'] | undefined {
  if (!Array.isArray(value)) return undefined;
  const changes: Data<'engine.file.change'>['changes'] = [];
  for (const change of value) {
    if (!isRecord(change) || !isString(change.path) || !isString(change.kind)) return undefined;
    changes.push({ path: change.path, kind: change.kind });
  }
  return changes;
}

function checkParsed(output: Fields): RaspData | undefined {
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
      const { call_id, kind, name } = output;
      // `input: z.unknown()` takes any value, undefined included, but the key must be there.
      if (!isString(call_id) || !isString(kind) || !TOOL_KINDS.has(kind) || !isString(name) || !('input' in output)) return undefined;
      return { type: 'engine.tool.call', call_id, kind: kind as Data<'engine.tool.call'>['kind'], name, input: output.input };
    }
    case 'engine.tool.result': {
      const { call_id, status, output: text, exit_code } = output;
      if (!isString(call_id) || !isString(status) || !RESULT_STATUSES.has(status) || !isStringOrNull(text) || !isIntOrNull(exit_code)) return undefined;
      return { type: 'engine.tool.result', call_id, status: status as Data<'engine.tool.result'>['status'], output: text, exit_code };
    }
    case 'engine.file.change': {
      const changes = checkChanges(output.changes);
      return changes ? { type: 'engine.file.change', changes } : undefined;
    }
    case 'engine.usage': {
      const usage = checkUsage(output.usage);
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
    case 'engine.skills.offered': {
      const { skills, source } = output;
      if (!Array.isArray(skills) || (source !== 'engine' && source !== 'model_request')) return undefined;
      const names: string[] = [];
      // Indexed, not `every`: a hole is an undefined element, which is not a string.
      for (let i = 0; i < skills.length; i += 1) {
        const name: unknown = skills[i];
        if (!isString(name)) return undefined;
        names.push(name);
      }
      return { type: 'engine.skills.offered', skills: names, source };
    }
    default:
      return undefined;
  }
}

/** The checked RASP data of a parser output, or a `PARSER_OUTPUT_INVALID` diagnostic when it does not fit the protocol. */
export function checkParserOutput(output: ParserOutput, engine: EngineId): RaspData {
  if (output.type === 'diagnostic') {
    const diagnostic = checkDiagnostic(output.diagnostic);
    if (diagnostic) return { type: 'diagnostic', diagnostic };
  } else {
    const parsed = isRecord(output) ? checkParsed(output) : undefined;
    if (parsed) return parsed;
  }
  return invalidOutput(output, engine);
}

/** The `PARSER_OUTPUT_INVALID` diagnostic of an output that does not fit the protocol. */
export function invalidOutput(output: ParserOutput, engine: EngineId): RaspData {
  let shown: string;
  try {
    shown = String(JSON.stringify(output)).slice(0, 200);
  } catch {
    shown = String(output).slice(0, 200);
  }
  return { type: 'diagnostic', diagnostic: { code: 'PARSER_OUTPUT_INVALID', message: `the ${engine} parser produced an invalid event: ${shown}`, level: 'error' } };
}
