/**
 * RASP → AgentEvent, one event at a time as the attempt runs: the first session id, each final assistant message
 * (`text`), reasoning (`thinking`), tool call (`tool_use`) and result (`tool_result`). `raw` is the engine's own
 * event: the JSON of the output line the event was parsed from (its text when it is not JSON). When that line is the
 * engine's init message (`EngineAdapter.initMessage`: claude's `system/init`, gemini's `init`), the `session` event
 * carries it as `content: { kind: 'system_init', raw }`, as seed 003's `mapClaudeMessage` does.
 */
import type { AgentEvent, RaspEvent } from '../protocol/index.js';

/** True when `raw` is an object whose fields hold every value of `pattern`. */
function matchesMessage(raw: unknown, pattern: Readonly<Record<string, string>>): boolean {
  if (typeof raw !== 'object' || raw === null) return false;
  const fields = raw as Record<string, unknown>;
  return Object.entries(pattern).every(([key, value]) => fields[key] === value);
}

/** A stateful mapper for one attempt; `initMessage` is the engine's init message, if it prints one. */
export function createAgentEventMapper(
  initMessage?: Readonly<Record<string, string>>,
): (event: RaspEvent) => AgentEvent[] {
  let lastRaw: unknown = null;
  let sessionSeen = false;
  return (event) => {
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
      case 'engine.assistant.message':
        return data.final ? [{ type: 'message', content: { kind: 'text', raw } }] : [];
      case 'engine.reasoning':
        return [{ type: 'message', content: { kind: 'thinking', raw } }];
      case 'engine.tool.call':
        return [{ type: 'message', content: { kind: 'tool_use', raw } }];
      case 'engine.tool.result':
        return [{ type: 'message', content: { kind: 'tool_result', raw } }];
      default:
        return [];
    }
  };
}
