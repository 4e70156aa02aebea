/**
 * iFlow CLI non-interactive output (`iflow -p PROMPT`), as documented and recorded by others for 0.5.x — the
 * CLI is not served by the npm registry reachable here, so this parser was built from those recordings, not
 * from a capture on this machine. Format: the final answer as plain text on stdout (possibly after bootstrap
 * lines such as "Welcome to iFlow CLI" or "using cached … authentication"), then an execution-info block, on
 * stderr in 0.5.x and on stdout in some wrappers:
 *
 *   <Execution Info>
 *   { "session-id": "session-…", "conversation-id": "…", "assistantRounds": 1, "executionTimeMs": 1234,
 *     "tokenUsage": { "input": 10, "output": 5, "total": 15 } }
 *   </Execution Info>
 *
 * The closing tag is the turn-end signal. Never throws: doubtful input becomes a diagnostic.
 */
import type { ParsedEvent, StreamName, Usage } from '../../protocol/index.js';
import type { EngineParser, ParserOutput } from '../engine.js';
import { count, diag } from '../parse-helpers.js';

const OPEN_TAG = '<Execution Info>';
const CLOSE_TAG = '</Execution Info>';
const BOOTSTRAP_NOISE = [/welcome to iflow cli/i, /^using cached .* authentication\.?$/i, /^\[ACP\]/, /^Checking /];
const API_ERROR =
  /error when talking to iflow api|generate data error|retrying with backoff|api error|invalid api key|token (?:has )?expired|unauthori[sz]ed|\b(401|403|404|429|5\d\d)\b/i;
/** iFlow 0.5.x prints a failed model call on stdout, in place of the answer: `[API Error: <message>]`. */
const STDOUT_API_ERROR = /^\[API Error: ([\s\S]*)\]$/;

/**
 * The message of an iFlow API error naming the server's code: the `code` of the JSON body the iFlow server
 * answers with (`{"success":false,"code":"401","message":"…"}`, or `{"error":{"code":…}}`), else an HTTP
 * status in the text. Without either, the text as it is.
 */
export function describeIflowApiError(text: string): string {
  const start = text.indexOf('{');
  const end = text.lastIndexOf('}');
  if (start >= 0 && end > start) {
    try {
      const body: unknown = JSON.parse(text.slice(start, end + 1));
      const record = body && typeof body === 'object' ? (body as Record<string, unknown>) : {};
      const inner =
        record.error && typeof record.error === 'object' ? (record.error as Record<string, unknown>) : record;
      const code = inner.code ?? record.code ?? inner.status;
      const message =
        typeof inner.message === 'string' ? inner.message : typeof record.msg === 'string' ? record.msg : text;
      if (typeof code === 'string' || typeof code === 'number')
        return `iFlow API error (server code ${String(code)}): ${message}`;
    } catch {
      // Not JSON after all: fall back to the status in the text.
    }
  }
  const status = /\b([45]\d\d)\b/.exec(text);
  return status ? `iFlow API error (server code ${status[1]}): ${text}` : `iFlow API error: ${text}`;
}

/** Token usage from the known spellings of iFlow's `tokenUsage`. */
function toUsage(raw: unknown): Usage | null {
  if (!raw || typeof raw !== 'object') return null;
  const u = raw as Record<string, unknown>;
  const input = count(u.input ?? u.inputTokens ?? u.input_tokens ?? u.prompt_tokens ?? u.promptTokens);
  const output = count(u.output ?? u.outputTokens ?? u.output_tokens ?? u.completion_tokens ?? u.completionTokens);
  return input === null && output === null ? null : { input_tokens: input, output_tokens: output };
}

/** A fresh iFlow parser for one attempt. */
export function createIflowParser(): EngineParser {
  let text: string[] = [];
  let info: string[] | null = null;
  let messages = 0;
  let turnEnded = false;
  let firstError: string | null = null;
  // A stdout `[API Error: …]` is the turn's outcome: the execution info that may follow does not make it a success.
  let apiError: string | null = null;

  const flushText = (): ParserOutput[] => {
    const body = text.join('\n').trim();
    text = [];
    if (body === '') return [];
    messages += 1;
    return [{ type: 'engine.assistant.message', message_id: `iflow-msg-${messages}`, text: body, final: true }];
  };

  const closeInfo = (): ParserOutput[] => {
    const raw = (info ?? []).join('\n').trim();
    info = null;
    const out: ParserOutput[] = [];
    let parsed: Record<string, unknown> | null = null;
    try {
      const value: unknown = JSON.parse(raw);
      if (value && typeof value === 'object' && !Array.isArray(value)) parsed = value as Record<string, unknown>;
      else out.push(diag('STREAM_PARSE_ERROR', `execution info is not a JSON object: ${raw.slice(0, 200)}`));
    } catch {
      out.push(diag('STREAM_PARSE_ERROR', `execution info is not valid JSON: ${raw.slice(0, 200)}`));
    }
    const session = parsed?.['session-id'] ?? parsed?.sessionId ?? parsed?.session_id;
    if (typeof session === 'string' && session !== '') out.push({ type: 'engine.session', session_id: session });
    out.push(...flushText());
    const usage = toUsage(parsed?.tokenUsage ?? parsed?.usage);
    if (usage) out.push({ type: 'engine.usage', usage });
    turnEnded = true;
    out.push({
      type: 'engine.turn.end',
      status: apiError ? 'failed' : 'completed',
      error: apiError,
    } satisfies ParsedEvent);
    return out;
  };

  return {
    line(stream: StreamName, line: string): ParserOutput[] {
      const out: ParserOutput[] = [];
      let rest = line;
      if (info === null) {
        const open = rest.indexOf(OPEN_TAG);
        if (open < 0) {
          const trimmed = rest.trim();
          if (stream === 'stderr') {
            if (API_ERROR.test(trimmed)) {
              firstError ??= trimmed.slice(0, 500);
              out.push({ type: 'engine.error', message: trimmed.slice(0, 500), fatal: false });
            }
            return out;
          }
          const stdoutError = STDOUT_API_ERROR.exec(trimmed);
          if (stdoutError) {
            apiError ??= describeIflowApiError(stdoutError[1]!).slice(0, 1000);
            firstError ??= apiError;
            return [{ type: 'engine.error', message: apiError, fatal: false }];
          }
          if (BOOTSTRAP_NOISE.some((pattern) => pattern.test(trimmed)))
            return [diag('IFLOW_STDOUT_NOISE', `ignored bootstrap line: ${trimmed.slice(0, 120)}`, 'info')];
          if (turnEnded && trimmed !== '')
            out.push(diag('IFLOW_TEXT_AFTER_TURN_END', 'stdout text arrived after the execution info block', 'info'));
          text.push(rest);
          return out;
        }
        if (stream !== 'stderr' && rest.slice(0, open).trim() !== '') text.push(rest.slice(0, open));
        info = [];
        rest = rest.slice(open + OPEN_TAG.length);
      }
      const close = rest.indexOf(CLOSE_TAG);
      if (close < 0) {
        info.push(rest);
        return out;
      }
      info.push(rest.slice(0, close));
      return [...out, ...closeInfo()];
    },
    end(): ParserOutput[] {
      const out: ParserOutput[] = [];
      if (info !== null) {
        out.push(diag('IFLOW_EXECUTION_INFO_TRUNCATED', 'the output ended inside an <Execution Info> block'));
        info = null;
      }
      const pending = flushText();
      if (pending.length > 0 && !turnEnded)
        out.push(
          diag('IFLOW_EXECUTION_INFO_MISSING', 'the output ended without an <Execution Info> block (no turn end)'),
        );
      // Without a turn end, the first API error on stderr is what ended the run.
      if (!turnEnded && firstError) out.push({ type: 'engine.error', message: firstError, fatal: true });
      return [...out, ...pending];
    },
  };
}
