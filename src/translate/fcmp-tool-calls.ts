/**
 * The tool calls of an attempt as every view shows them, read from FCMP: `tool.call` starts an item (`running`),
 * the `tool.result` with the same `call_id` completes it (`completed`, `failed`, `declined`, `abandoned`...). The
 * normalization itself (the command without the engine's wrapper, the exit code from whatever evidence has it, the
 * status derived from it) happens once, in the FCMP translator (`fcmp.ts` over `tool-calls.ts`); the Vitest result,
 * the provider events, the ACP updates, the timelines and the exports all take these values from here.
 *
 * FCMP keeps excerpts of a tool's input and output; a view that shows them whole takes them from the RASP event the
 * FCMP event derives from ({@link ToolCallFold.pushRasp}), as given, never normalized again.
 */
import type { FcmpEvent, RaspEvent } from '../protocol/index.js';
import type { NormalizedToolCall } from './tool-calls.js';

/** The status of a tool call whose `tool.result` has not come yet. */
export const RUNNING_TOOL_STATUS = 'running';

type ToolCallEvent = Extract<FcmpEvent, { type: 'tool.call' }>;
type ToolResultEvent = Extract<FcmpEvent, { type: 'tool.result' }>;

/** A tool call from its FCMP `tool.call` event: a `running` item with no result yet. */
export function toolCallOf(event: ToolCallEvent, input?: unknown): NormalizedToolCall {
  const { data } = event;
  return {
    callId: data.call_id,
    kind: data.kind,
    name: data.name,
    input: input !== undefined ? input : data.command !== null ? { command: data.command } : data.input_excerpt,
    command: data.command,
    status: RUNNING_TOOL_STATUS,
    output: null,
    exitCode: null,
  };
}

/** Completes `call` with its FCMP `tool.result` (the whole output when the RASP result gave it, else the excerpt). */
export function completeToolCall(call: NormalizedToolCall, event: ToolResultEvent, output?: string | null): void {
  call.status = event.data.status;
  call.exitCode = event.data.exit_code;
  call.output = output !== undefined ? output : event.data.output_excerpt;
}

/**
 * Folds an attempt's FCMP (live or read back) into its tool calls, in the order they started; push the RASP events
 * too (before or interleaved) for the whole inputs and outputs.
 */
export class ToolCallFold {
  private readonly calls = new Map<string, NormalizedToolCall>();
  private readonly inputs = new Map<string, unknown>();
  private readonly outputs = new Map<string, string | null>();

  /** Keeps a tool's whole input or output from a RASP event, for the FCMP event that derives from it. */
  pushRasp(event: RaspEvent): void {
    const data = event.data;
    if (data.type === 'engine.tool.call' && !this.inputs.has(data.call_id)) this.inputs.set(data.call_id, data.input);
    else if (data.type === 'engine.tool.result') {
      this.outputs.set(data.call_id, data.output);
      const call = this.calls.get(data.call_id);
      // A result FCMP already gave (its excerpt) gets the whole text.
      if (call && call.status !== RUNNING_TOOL_STATUS) call.output = data.output;
    }
  }

  /** Applies one FCMP event; returns the call it started or completed, else null. */
  push(event: FcmpEvent): NormalizedToolCall | null {
    if (event.type === 'tool.call') {
      if (this.calls.has(event.data.call_id)) return null;
      const call = toolCallOf(event, this.inputs.get(event.data.call_id));
      this.calls.set(call.callId, call);
      return call;
    }
    if (event.type === 'tool.result') {
      const call = this.calls.get(event.data.call_id);
      if (!call) return null;
      completeToolCall(call, event, this.outputs.get(event.data.call_id));
      return call;
    }
    return null;
  }

  /** The calls so far, in the order they started. */
  get toolCalls(): NormalizedToolCall[] {
    return [...this.calls.values()];
  }
}

/** The tool calls of an attempt's FCMP events, with whole inputs and outputs from its RASP events when given. */
export function toolCallsOf(fcmp: Iterable<FcmpEvent>, rasp: Iterable<RaspEvent> = []): NormalizedToolCall[] {
  const fold = new ToolCallFold();
  for (const event of rasp) fold.pushRasp(event);
  for (const event of fcmp) fold.push(event);
  return fold.toolCalls;
}
