/**
 * RASP → AgentEvent, one event at a time as the attempt runs: the first session id, each final assistant message
 * (`text`), reasoning (`thinking`), tool call (`tool_use`) and result (`tool_result`). `raw` is the engine's own
 * event: the JSON of the output line the event was parsed from (its text when it is not JSON).
 */
import type { AgentEvent, RaspEvent } from '../protocol/index.js';

/** A stateful mapper for one attempt. */
export function createAgentEventMapper(): (event: RaspEvent) => AgentEvent[] {
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
        return [{ type: 'session', sessionId: data.session_id }];
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
