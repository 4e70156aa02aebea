/**
 * Parser of `opencode run --format json` output: NDJSON on stdout, one event per line, each
 * `{type, timestamp, sessionID, part | error}`. Observed on opencode 1.18.33 (`opencode-ai`, Bun-compiled
 * binary) against the scripted model server; samples recorded by tests/engine/engine-matrix.engine.test.ts and
 * copied to fixtures/streams/opencode/. Event types:
 *
 * - `step_start` (part.type `step-start`): one model call begins; a user turn is one or more steps;
 * - `text` (part.type `text`, whole text once `time.end` is set) and `reasoning` (with `--thinking`);
 * - `tool_use` (part.type `tool`, `tool`, `callID`, `state{status: completed|error, input, output,
 *   metadata.exit, error}`), printed once the tool finished;
 * - `step_finish` (part `reason`: `tool-calls` → another step follows, `stop` → the turn ended, `length`,
 *   `content-filter`, `error`…; `tokens{input, output, reasoning, cache{read, write}}`);
 * - `error` (`error{name, data{message, statusCode?}}`): the session failed; no step_finish follows.
 *
 * stderr is empty unless `--print-logs`; error-looking lines become ENGINE_STDERR info diagnostics.
 */
import type { ParsedEvent, StreamName, Usage } from '../../protocol/index.js';
import type { EngineParser, ParserOutput } from '../engine.js';
import { diag, excerpt, isObject, str, int, count, type Json, readJsonlEngineLine } from '../parse-helpers.js';

type ToolKind = Extract<ParsedEvent, { type: 'engine.tool.call' }>['kind'];

const STDERR_ERROR = /\bERROR\b|Error:/;
const FILE_TOOLS = new Set(['write', 'edit', 'patch', 'multiedit', 'apply_patch']);

/** Tool kind of an opencode tool name. */
function toolKind(name: string): ToolKind {
  if (name === 'bash') return 'shell';
  if (FILE_TOOLS.has(name)) return 'file_change';
  if (name === 'skill') return 'skill';
  if (name === 'websearch') return 'web_search';
  return 'other';
}

/** What an opencode parser remembers between lines. */
interface OpencodeParseState {
  /** The session id last reported. */
  session: string | null;
  /** A step opened a turn and no final step_finish or error closed it yet. */
  turnOpen: boolean;
  /** Turns opened so far. */
  turns: number;
  /** Tool call ids already reported. */
  calls: Set<string>;
}

/** A fresh parser for one opencode attempt. Never throws. */
export function createOpencodeParser(): EngineParser {
  const state: OpencodeParseState = { session: null, turnOpen: false, turns: 0, calls: new Set() };
  return { line: (stream, rawText) => readOpencodeLine(state, stream, rawText), end: () => endOpencodeStream(state) };
}

/** One line of any stream (see {@link readJsonlEngineLine}). */
function readOpencodeLine(state: OpencodeParseState, stream: StreamName, rawText: string): ParserOutput[] {
  return readJsonlEngineLine(stream, rawText, STDERR_ERROR, 'an opencode event object', (event, line) =>
    onOpencodeEvent(state, event, line),
  );
}

/** The stream's end: a turn still open (`turnOpen`) is a diagnostic. */
function endOpencodeStream(state: OpencodeParseState): ParserOutput[] {
  return state.turnOpen
    ? [
        diag(
          'OPENCODE_TURN_NOT_ENDED',
          `turn ${state.turns} started but the stream ended without step_finish(stop) or an error event`,
        ),
      ]
    : [];
}

/** The session event when the event names a new session (sets `session`). */
function reportSession(state: OpencodeParseState, event: Json): ParsedEvent[] {
  const id = str(event.sessionID) ?? (isObject(event.part) ? str(event.part.sessionID) : null);
  if (!id || id === state.session) return [];
  state.session = id;
  return [{ type: 'engine.session', session_id: id }];
}

/** A turn started, unless one is open (sets `turnOpen`, counts `turns`). */
function openTurn(state: OpencodeParseState): ParsedEvent[] {
  if (state.turnOpen) return [];
  state.turnOpen = true;
  state.turns += 1;
  return [{ type: 'engine.turn.started' }];
}

/** One event: its session first, then by type (tools and step ends have handlers of their own). */
function onOpencodeEvent(state: OpencodeParseState, event: Json, text: string): ParserOutput[] {
  const out: ParserOutput[] = [...reportSession(state, event)];
  const part = isObject(event.part) ? event.part : null;
  const needPart = (): ParserOutput[] => [
    diag('STREAM_PARSE_ERROR', `${String(event.type)} without a part object: ${excerpt(text)}`),
  ];
  switch (event.type) {
    case 'step_start':
      return [...out, ...openTurn(state)];
    case 'text':
      if (!part) return [...out, ...needPart()];
      return [
        ...out,
        ...openTurn(state),
        {
          type: 'engine.assistant.message',
          message_id: str(part.id) ?? `text#${state.turns}`,
          text: str(part.text) ?? '',
          final: true,
        },
      ];
    case 'reasoning':
      if (!part) return [...out, ...needPart()];
      return [
        ...out,
        ...openTurn(state),
        { type: 'engine.reasoning', item_id: str(part.id), text: str(part.text) ?? '' },
      ];
    case 'tool_use':
      if (!part) return [...out, ...needPart()];
      return [...out, ...openTurn(state), ...onOpencodeTool(state, part)];
    case 'step_finish':
      if (!part) return [...out, ...needPart()];
      return [...out, ...onStepFinish(state, part)];
    case 'error': {
      const message = errorMessage(event.error) ?? excerpt(text);
      state.turnOpen = false;
      return [
        ...out,
        { type: 'engine.error', message, fatal: true },
        { type: 'engine.turn.end', status: 'failed', error: message },
      ];
    }
    default:
      return [
        ...out,
        diag(
          'OPENCODE_UNKNOWN_EVENT',
          `unknown opencode event type ${JSON.stringify(event.type)}: ${excerpt(text)}`,
          'info',
        ),
      ];
  }
}

/** A `tool_use` part: the call the first time its id is seen (adds it to `calls`), its result once it ended. */
function onOpencodeTool(state: OpencodeParseState, part: Json): ParserOutput[] {
  const id = str(part.callID) ?? str(part.id) ?? `tool#${state.calls.size + 1}`;
  const toolState = isObject(part.state) ? part.state : {};
  // A call of a tool opencode lacks is repaired into its `invalid` tool ({tool, error}), which "completes": it is
  // still the model's call of that tool, and it failed.
  const invalid = part.tool === 'invalid' && isObject(toolState.input) ? str(toolState.input.tool) : null;
  const name = invalid ?? str(part.tool) ?? 'unknown';
  const status = invalid && str(toolState.status) === 'completed' ? 'error' : str(toolState.status);
  const input = invalid ? null : (toolState.input ?? null);
  const kind = toolKind(name);
  const out: ParserOutput[] = [];
  if (!state.calls.has(id)) {
    state.calls.add(id);
    out.push({
      type: 'engine.tool.call',
      call_id: id,
      kind,
      name,
      input: kind === 'shell' && isObject(input) ? { ...input, command: str(input.command) ?? '' } : input,
    });
  }
  if (status === 'completed' || status === 'error') {
    const metadata = isObject(toolState.metadata) ? toolState.metadata : {};
    if (status === 'completed' && kind === 'file_change') {
      const file = isObject(input) ? (str(input.filePath) ?? str(input.path)) : null;
      if (file)
        out.push({
          type: 'engine.file.change',
          changes: [{ path: file, kind: name === 'write' ? 'write' : 'update' }],
        });
    }
    out.push({
      type: 'engine.tool.result',
      call_id: id,
      status: status === 'error' ? 'failed' : 'completed',
      output: status === 'error' ? (str(toolState.error) ?? str(toolState.output)) : str(toolState.output),
      exit_code: int(metadata.exit),
    });
  }
  return out;
}

/** A `step_finish` part: the usage, and unless more tool calls follow, the turn's end (clears `turnOpen`). */
function onStepFinish(state: OpencodeParseState, part: Json): ParserOutput[] {
  const out: ParserOutput[] = [{ type: 'engine.usage', usage: usage(part.tokens) }];
  const reason = str(part.reason);
  if (reason === 'tool-calls') return out;
  state.turnOpen = false;
  if (reason === 'stop') out.push({ type: 'engine.turn.end', status: 'completed', error: null });
  else if (reason === 'length')
    out.push({
      type: 'engine.turn.end',
      status: 'failed',
      error: 'MessageOutputLengthError: the model hit its output token limit (finish reason length)',
    });
  else
    out.push({
      type: 'engine.turn.end',
      status: 'failed',
      error: `step finished with reason ${JSON.stringify(reason)}`,
    });
  return out;
}

/** `Name: message (status N)` from an opencode error object, or null. */
function errorMessage(value: unknown): string | null {
  if (typeof value === 'string') return value;
  if (!isObject(value)) return null;
  const data = isObject(value.data) ? value.data : {};
  const name = str(value.name);
  const message = str(data.message) ?? str(value.message);
  const status = int(data.statusCode);
  const text = [name, message].filter((s): s is string => Boolean(s)).join(': ');
  if (!text) return null;
  return status !== null ? `${text} (status ${status})` : text;
}

/**
 * opencode's `tokens.input` leaves out the tokens read from the prompt cache (`tokens.cache.read`, the usage's
 * `cached_input_tokens`): `EngineAdapter.cacheReportedApart`.
 */
export const OPENCODE_CACHE_REPORTED_APART = true;

function usage(value: unknown): Usage {
  const t = isObject(value) ? value : {};
  const cache = isObject(t.cache) ? t.cache : {};
  return {
    input_tokens: count(t.input),
    output_tokens: count(t.output),
    cached_input_tokens: count(cache.read),
    reasoning_output_tokens: count(t.reasoning),
  };
}
