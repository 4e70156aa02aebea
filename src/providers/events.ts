/**
 * An attempt's events → AgentEvent, one at a time as the attempt runs, a small mapper over FCMP: the first session
 * id, each final assistant message (`text`), each tool call (`tool_use`, as it starts) and its result
 * (`tool_result`, when FCMP completes it: a result whose exit code came later comes then), all with FCMP's values
 * (`content.text`, `content.tool`); reasoning (`thinking`), which FCMP does not carry, from RASP. `raw` is the
 * engine's own event: the JSON of the output line the event was parsed from (its text when it is not JSON). When
 * that line is the engine's init message (`EngineAdapter.initMessage`: claude's `system/init`, gemini's `init`), the
 * `session` event carries it as `content: { kind: 'system_init', raw }`, as seed 003's `mapClaudeMessage` does.
 */
import type { AttemptResult } from '../core/attempt-result.js';
import type { AgentEvent, FcmpEvent } from '../protocol/index.js';
import { isFcmpEvent, type AttemptEvent } from '../translate/attempt-events.js';

/** True when `raw` is an object whose fields hold every value of `pattern`. */
function matchesMessage(raw: unknown, pattern: Readonly<Record<string, string>>): boolean {
  if (typeof raw !== 'object' || raw === null) return false;
  const fields = raw as Record<string, unknown>;
  return Object.entries(pattern).every(([key, value]) => fields[key] === value);
}

type ToolCall = Extract<FcmpEvent, { type: 'tool.call' }>['data'];

/** A stateful mapper for one attempt; `initMessage` is the engine's init message, if it prints one. */
export function createAgentEventMapper(
  initMessage?: Readonly<Record<string, string>>,
): (event: AttemptEvent) => AgentEvent[] {
  let lastRaw: unknown = null;
  let sessionSeen = false;
  /** The engine's own event of each message and tool event, by the key FCMP's event finds it with. */
  const raws = new Map<string, unknown>();
  const calls = new Map<string, ToolCall>();
  const rawOf = (key: string, fallback: unknown): unknown => {
    const raw = raws.get(key);
    raws.delete(key);
    return raw === undefined ? fallback : raw;
  };
  const fromFcmp = (event: FcmpEvent): AgentEvent[] => {
    switch (event.type) {
      case 'assistant.message.final':
        return [
          {
            type: 'message',
            content: { kind: 'text', raw: rawOf(`final ${event.data.message_id}`, event.data), text: event.data.text },
          },
        ];
      case 'tool.call': {
        const { call_id, kind, name, command } = event.data;
        calls.set(call_id, event.data);
        const tool = { callId: call_id, kind, name, command, status: 'running', exitCode: null };
        return [{ type: 'message', content: { kind: 'tool_use', raw: rawOf(`call ${call_id}`, event.data), tool } }];
      }
      case 'tool.result': {
        const call = calls.get(event.data.call_id);
        const tool = {
          callId: event.data.call_id,
          kind: call?.kind ?? 'other',
          name: call?.name ?? '',
          command: call?.command ?? null,
          status: event.data.status,
          exitCode: event.data.exit_code,
        };
        return [
          {
            type: 'message',
            content: { kind: 'tool_result', raw: rawOf(`result ${event.data.call_id}`, event.data), tool },
          },
        ];
      }
      default:
        return [];
    }
  };
  return (event) => {
    if (isFcmpEvent(event)) return fromFcmp(event);
    const data = event.data;
    if (data.type === 'raw.line') {
      try {
        lastRaw = JSON.parse(data.text);
      } catch {
        lastRaw = data.text;
      }
      return [];
    }
    const raw = event.raw_ref ? lastRaw : data;
    switch (data.type) {
      case 'engine.session':
        if (sessionSeen) return [];
        sessionSeen = true;
        return initMessage && event.raw_ref && matchesMessage(lastRaw, initMessage)
          ? [{ type: 'session', sessionId: data.session_id, content: { kind: 'system_init', raw: lastRaw } }]
          : [{ type: 'session', sessionId: data.session_id }];
      case 'engine.reasoning':
        return [{ type: 'message', content: { kind: 'thinking', raw } }];
      case 'engine.assistant.message':
        if (data.final) raws.set(`final ${data.message_id}`, raw);
        return [];
      case 'engine.tool.call':
        raws.set(`call ${data.call_id}`, raw);
        return [];
      case 'engine.tool.result':
        raws.set(`result ${data.call_id}`, raw);
        return [];
      default:
        return [];
    }
  };
}

/** Why a turn failed: the engine's failure message (FCMP `conversation.failed`), else the completion's reason. */
function failureMessage(result: Pick<AttemptResult, 'fcmp' | 'completion'>): string {
  const last = result.fcmp.at(-1);
  const message = last?.type === 'conversation.failed' ? last.data.message : undefined;
  return typeof message === 'string' && message.length > 0
    ? message
    : (result.completion.reason ?? `the turn ended ${result.completion.state}`);
}

/**
 * The events that end a query that was not aborted: a failed turn's `error` (seed 003 maps codex's `turn.failed`
 * so), then the `complete` every such query ends with (seed 003's claude `result`, `success: false` for a failure),
 * with the usage; `diagnostics` says where the audit is.
 */
export function endEventsOf(
  result: Pick<AttemptResult, 'fcmp' | 'completion' | 'usage' | 'sessionId'>,
  diagnostics: Record<string, unknown>,
): AgentEvent[] {
  const success = result.completion.state === 'completed' || result.completion.state === 'awaiting_input';
  const failure = success ? null : failureMessage(result);
  const usage =
    result.usage && result.usage.input_tokens !== null && result.usage.output_tokens !== null
      ? {
          inputTokens: result.usage.input_tokens,
          outputTokens: result.usage.output_tokens,
          ...(result.usage.cached_input_tokens != null ? { cachedTokens: result.usage.cached_input_tokens } : {}),
        }
      : undefined;
  const session = result.sessionId ? { sessionId: result.sessionId } : {};
  const out: AgentEvent[] = [];
  if (failure !== null)
    out.push({
      type: 'error',
      ...session,
      error: failure,
      diagnostics: { ...diagnostics, completion: result.completion },
    });
  out.push({
    type: 'complete',
    ...session,
    result: { success, ...(usage ? { usage } : {}), ...(failure !== null ? { errors: [failure] } : {}) },
    diagnostics: { ...diagnostics, completion: result.completion },
  });
  return out;
}
