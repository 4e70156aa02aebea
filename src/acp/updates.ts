/**
 * RASP → ACP `session/update`, one event at a time as the attempt runs: what an editor shows of an attempt. Message
 * text becomes `agent_message_chunk` (streamed deltas as they come; a whole message once, unless its deltas were
 * already sent), reasoning `agent_thought_chunk`, a tool call `tool_call` (status `in_progress`, its input as
 * `rawInput`) and its result `tool_call_update` (status and output text). Lifecycle, raw lines, usage and
 * diagnostics stay in the audit: an editor gets only what the engine said, without the done marker.
 */
import type { SessionUpdate, StopReason, ToolCallStatus, ToolKind } from '@agentclientprotocol/sdk';
import type { AttemptResult } from '../core/attempt-result.js';
import type { ParsedEvent, RaspEvent } from '../protocol/index.js';
import { createDoneMarkerFilter, type DoneMarkerFilter, stripDoneMarker } from '../translate/done-marker.js';

type ToolCallEvent = Extract<ParsedEvent, { type: 'engine.tool.call' }>;
type ToolResultEvent = Extract<ParsedEvent, { type: 'engine.tool.result' }>;

/** The ACP tool kind of a RASP tool kind (an editor picks its icon from it). */
const TOOL_KINDS: Readonly<Record<ToolCallEvent['kind'], ToolKind>> = {
  shell: 'execute',
  file_change: 'edit',
  mcp: 'other',
  web_search: 'fetch',
  skill: 'read',
  other: 'other',
};

/** The ACP status of a RASP tool result (`declined`: the engine refused to run it, shown as failed). */
const TOOL_STATUSES: Readonly<Record<ToolResultEvent['status'], ToolCallStatus>> = {
  completed: 'completed',
  failed: 'failed',
  declined: 'failed',
  in_progress: 'in_progress',
};

/** A one-line title for a tool call: the shell command when there is one, else the tool's name. */
export function toolCallTitle(call: Pick<ToolCallEvent, 'kind' | 'name' | 'input'>): string {
  const input = call.input;
  if (call.kind === 'shell' && typeof input === 'object' && input !== null) {
    const fields = input as Record<string, unknown>;
    const command = fields.command ?? fields.cmd;
    if (typeof command === 'string' && command.length > 0) return command;
    if (Array.isArray(command) && command.every((part) => typeof part === 'string')) return command.join(' ');
  }
  if (typeof input === 'string' && call.kind === 'shell' && input.length > 0) return input;
  return call.name;
}

/**
 * A stateful mapper for one attempt: give it every RASP event in order, send what it returns as the `update` of a
 * `session/update` notification.
 */
export function createSessionUpdateMapper(): (event: RaspEvent) => SessionUpdate[] {
  const streamed = new Map<string, DoneMarkerFilter>();
  return (event) => {
    const data = event.data;
    switch (data.type) {
      case 'engine.assistant.message': {
        // The done marker is the harness's contract with the agent, not chat: the editor never shows it.
        let text: string;
        if (!data.final) {
          let filter = streamed.get(data.message_id);
          if (!filter) streamed.set(data.message_id, (filter = createDoneMarkerFilter()));
          text = filter.push(data.text);
        } else {
          const filter = streamed.get(data.message_id);
          text = filter ? filter.flush() : (stripDoneMarker(data.text) ?? '');
        }
        if (text.length === 0) return [];
        return [
          {
            sessionUpdate: 'agent_message_chunk',
            content: { type: 'text', text },
            ...(data.message_id ? { messageId: data.message_id } : {}),
          },
        ];
      }
      case 'engine.reasoning':
        return data.text.length === 0
          ? []
          : [{ sessionUpdate: 'agent_thought_chunk', content: { type: 'text', text: data.text } }];
      case 'engine.tool.call':
        return [
          {
            sessionUpdate: 'tool_call',
            toolCallId: data.call_id,
            title: toolCallTitle(data),
            kind: TOOL_KINDS[data.kind],
            status: 'in_progress',
            rawInput: data.input,
          },
        ];
      case 'engine.tool.result':
        return [
          {
            sessionUpdate: 'tool_call_update',
            toolCallId: data.call_id,
            status: TOOL_STATUSES[data.status],
            ...(data.output !== null && data.output.length > 0
              ? { content: [{ type: 'content', content: { type: 'text', text: data.output } }] }
              : {}),
            rawOutput: { output: data.output, exit_code: data.exit_code },
          },
        ];
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
