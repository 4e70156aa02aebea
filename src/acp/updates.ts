/**
 * An attempt's events → ACP `session/update`, one at a time as the attempt runs: what an editor shows of an attempt,
 * a small mapper over FCMP. Message text becomes `agent_message_chunk` (FCMP's deltas as they come; a final message
 * whole, unless its deltas were already sent), a tool call `tool_call` (status `in_progress`, titled with FCMP's
 * command or name) and its result `tool_call_update` (FCMP's status and exit code, when FCMP completes it).
 * Reasoning (`agent_thought_chunk`), and a tool's whole input (`rawInput`) and output, come from RASP, which FCMP
 * keeps only excerpts of. Lifecycle, raw lines, usage and diagnostics stay in the audit: an editor gets only what the
 * engine said, without the done marker.
 */
import type { SessionUpdate, StopReason, ToolCallStatus, ToolKind } from '@agentclientprotocol/sdk';
import type { AttemptResult } from '../core/attempt-result.js';
import type { FcmpEvent } from '../protocol/index.js';
import { isFcmpEvent, type AttemptEvent } from '../translate/attempt-events.js';
import { createDoneMarkerFilter, type DoneMarkerFilter, stripDoneMarker } from '../translate/done-marker.js';

type ToolCallData = Extract<FcmpEvent, { type: 'tool.call' }>['data'];

/** The ACP tool kind of a tool call's kind (an editor picks its icon from it). */
const TOOL_KINDS: Readonly<Record<string, ToolKind>> = {
  shell: 'execute',
  file_change: 'edit',
  mcp: 'other',
  web_search: 'fetch',
  skill: 'read',
  other: 'other',
};

/**
 * The ACP status of an FCMP tool status (`declined`: the engine refused to run it, and `abandoned`: it had no result
 * when the attempt ended, are shown as failed).
 */
function toolStatusOf(status: string): ToolCallStatus {
  switch (status) {
    case 'completed':
      return 'completed';
    case 'in_progress':
    case 'running':
      return 'in_progress';
    default:
      return 'failed';
  }
}

/** A one-line title for a tool call: FCMP's shell command when there is one, else the tool's name. */
export function toolCallTitle(call: Pick<ToolCallData, 'name' | 'command'>): string {
  return call.command !== null && call.command.length > 0 ? call.command : call.name;
}

/**
 * A stateful mapper for one attempt: give it every event in order (RASP and FCMP, as `AttemptRequest.onRaspEvent`
 * and `onFcmpEvent` give them), send what it returns as the `update` of a `session/update` notification.
 */
export function createSessionUpdateMapper(): (event: AttemptEvent) => SessionUpdate[] {
  const streamed = new Map<string, DoneMarkerFilter>();
  const inputs = new Map<string, unknown>();
  const outputs = new Map<string, string | null>();
  const message = (messageId: string, text: string): SessionUpdate[] =>
    text.length === 0
      ? []
      : [
          {
            sessionUpdate: 'agent_message_chunk',
            content: { type: 'text', text },
            ...(messageId ? { messageId } : {}),
          },
        ];
  const fromFcmp = (event: FcmpEvent): SessionUpdate[] => {
    switch (event.type) {
      case 'assistant.message.delta': {
        // The done marker is the harness's contract with the agent, not chat: the editor never shows it.
        let filter = streamed.get(event.data.message_id);
        if (!filter) streamed.set(event.data.message_id, (filter = createDoneMarkerFilter()));
        return message(event.data.message_id, filter.push(event.data.text));
      }
      case 'assistant.message.final': {
        const filter = streamed.get(event.data.message_id);
        return message(event.data.message_id, filter ? filter.flush() : (stripDoneMarker(event.data.text) ?? ''));
      }
      case 'tool.call': {
        const { call_id, kind } = event.data;
        const input = inputs.get(call_id);
        inputs.delete(call_id);
        return [
          {
            sessionUpdate: 'tool_call',
            toolCallId: call_id,
            title: toolCallTitle(event.data),
            kind: TOOL_KINDS[kind] ?? 'other',
            status: 'in_progress',
            rawInput: input !== undefined ? input : (event.data.input_excerpt ?? { command: event.data.command }),
          },
        ];
      }
      case 'tool.result': {
        const { call_id, status, exit_code } = event.data;
        const output = outputs.has(call_id) ? (outputs.get(call_id) ?? null) : event.data.output_excerpt;
        outputs.delete(call_id);
        return [
          {
            sessionUpdate: 'tool_call_update',
            toolCallId: call_id,
            status: toolStatusOf(status),
            ...(output !== null && output.length > 0
              ? { content: [{ type: 'content', content: { type: 'text', text: output } }] }
              : {}),
            rawOutput: { output, exit_code },
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
    switch (data.type) {
      case 'engine.reasoning':
        return data.text.length === 0
          ? []
          : [{ sessionUpdate: 'agent_thought_chunk', content: { type: 'text', text: data.text } }];
      case 'engine.tool.call':
        if (!inputs.has(data.call_id)) inputs.set(data.call_id, data.input);
        return [];
      case 'engine.tool.result':
        outputs.set(data.call_id, data.output);
        return [];
      default:
        return [];
    }
  };
}

/**
 * The stop reason of a finished attempt: `cancelled` when the client cancelled it, `end_turn` when the engine
 * finished its turn (completed, or waiting for the next message); null for a failed attempt, which the agent
 * answers with a JSON-RPC error naming the failure and the run.
 */
export function stopReasonOf(result: Pick<AttemptResult, 'completion'>, cancelRequested: boolean): StopReason | null {
  if (cancelRequested) return 'cancelled';
  const { state } = result.completion;
  return state === 'completed' || state === 'awaiting_input' ? 'end_turn' : null;
}
