/**
 * An attempt's events in the one order its views read them: each RASP event followed by the FCMP events it gave.
 * Live, that order is the attempt's own (`AttemptRequest.onRaspEvent` / `onFcmpEvent`); for a recorded attempt,
 * {@link interleaveEvents} rebuilds it from `rasp.N.jsonl` and `fcmp.N.jsonl`. A view takes every normalized fact
 * (messages, tool calls and their exit codes and statuses, the verdict) from the FCMP events, and from RASP only what
 * FCMP does not carry (reasoning, usage, the engine's own lines, a tool's whole input and output).
 */
import type { FcmpEvent, RaspEvent } from '../protocol/index.js';

/** One event of an attempt: RASP (what the engine printed, parsed) or FCMP (the conversation, normalized). */
export type AttemptEvent = RaspEvent | FcmpEvent;

/** True for an FCMP event (its `type` is on the envelope; a RASP event's is in its `data`). */
export function isFcmpEvent(event: AttemptEvent): event is FcmpEvent {
  return 'type' in event;
}

/** The RASP event an FCMP event derives from, as a key both give (null: FCMP's own, or not tied to one event). */
function fcmpKey(event: FcmpEvent): string | null {
  switch (event.type) {
    case 'assistant.message.delta':
      return `delta ${event.data.message_id}`;
    case 'assistant.message.final':
      return `final ${event.data.message_id}`;
    case 'tool.call':
      return `call ${event.data.call_id}`;
    case 'tool.result':
      // An abandoned call has no result event to follow: it stays where FCMP put it, at the end.
      return event.raw_ref === null && event.data.status === 'abandoned' ? null : `result ${event.data.call_id}`;
    default:
      return null;
  }
}

function raspKey(event: RaspEvent): string | null {
  const data = event.data;
  switch (data.type) {
    case 'engine.assistant.message':
      return `${data.final ? 'final' : 'delta'} ${data.message_id}`;
    case 'engine.tool.call':
      return `call ${data.call_id}`;
    case 'engine.tool.result':
      return `result ${data.call_id}`;
    default:
      return null;
  }
}

/**
 * A recorded attempt's RASP and FCMP in their live order: each FCMP message or tool event right after the RASP event
 * it derives from (a result completed later included: it is shown where the engine reported it), `conversation.started`
 * (and a resume's reply) after the first RASP event, everything else FCMP says (warnings, abandoned calls, the
 * terminal event) at the end in FCMP order.
 */
export function* interleaveEvents(rasp: Iterable<RaspEvent>, fcmp: readonly FcmpEvent[]): Generator<AttemptEvent> {
  const byOrigin = new Map<string, FcmpEvent[]>();
  const leading: FcmpEvent[] = [];
  const trailing: FcmpEvent[] = [];
  for (const event of fcmp) {
    const key = fcmpKey(event);
    if (key === null)
      (event.type === 'conversation.started' || event.type === 'user.input.replied' ? leading : trailing).push(event);
    else {
      const queue = byOrigin.get(key);
      if (queue) queue.push(event);
      else byOrigin.set(key, [event]);
    }
  }
  let first = true;
  for (const event of rasp) {
    yield event;
    if (first) {
      first = false;
      yield* leading;
    }
    const key = raspKey(event);
    const queue = key === null ? undefined : byOrigin.get(key);
    const next = queue?.shift();
    if (next) yield next;
    if (queue && queue.length === 0) byOrigin.delete(key!);
  }
  if (first) yield* leading;
  // FCMP events no RASP event accounts for (no rasp file, or one cut short) keep their order.
  const left = new Set(trailing);
  for (const queue of byOrigin.values()) for (const event of queue) left.add(event);
  for (const event of fcmp) if (left.has(event)) yield event;
}
