/**
 * An attempt's events → the items of its timeline, a small mapper over FCMP: messages and tool calls (their command,
 * status and exit code as FCMP normalized them; a tool item is completed in place when FCMP completes it) come from
 * FCMP, what FCMP does not carry (the launch and exit, reasoning, errors, diagnostics, a tool's whole input and output)
 * from RASP. The same builder reads a finished attempt (`rasp.N.jsonl` and `fcmp.N.jsonl`, interleaved) and tails a
 * running one (`agent-harness view`), so the live view and the report show the same thing. Texts are bounded
 * ({@link MAX_VIEW_TEXT}): the whole output stays in the raw logs.
 */
import type { FcmpEvent } from '../protocol/index.js';
import { isFcmpEvent, type AttemptEvent } from '../translate/attempt-events.js';
import { ToolCallFold } from '../translate/fcmp-tool-calls.js';
import type { NormalizedToolCall } from '../translate/tool-calls.js';
import type { TimelineItem, ViewTool } from './view-schema.js';

/** Longest text (characters) a timeline item carries; longer ones are cut with a note naming how much was left out. */
export const MAX_VIEW_TEXT = 1024 * 1024;

/** Cuts `text` to {@link MAX_VIEW_TEXT} characters, saying how many were left out. */
export function boundText(text: string | null, max = MAX_VIEW_TEXT): string | null {
  if (text === null || text.length <= max) return text;
  return `${text.slice(0, max)}\n… ${text.length - max} more characters in the attempt's raw logs`;
}

function inputText(input: unknown): string | null {
  if (input === undefined || input === null) return null;
  try {
    return boundText(typeof input === 'string' ? input : JSON.stringify(input), 64 * 1024);
  } catch {
    return null;
  }
}

/** The timeline's form of a tool call (texts bounded). */
function viewToolOf(call: NormalizedToolCall): ViewTool {
  return {
    callId: call.callId,
    kind: call.kind,
    name: call.name,
    command: call.command,
    input: inputText(call.input),
    status: call.status,
    exitCode: call.exitCode,
    output: boundText(call.output),
  };
}

/** Builds timeline items from an attempt's events, in order; feed events with {@link push}, read {@link items}. */
export class TimelineBuilder {
  /** The items so far (a tool item is completed in place when its result arrives). */
  readonly items: TimelineItem[] = [];
  private readonly tools = new Map<string, TimelineItem>();
  private readonly fold = new ToolCallFold();
  private start: number | null = null;
  /** The seq of the last RASP event: an FCMP event's item takes it (the RASP event it derives from). */
  private seq = 0;

  /** Adds one event (RASP or FCMP); returns the item it added or completed, or null when it shows nothing. */
  push(event: AttemptEvent): TimelineItem | null {
    if (isFcmpEvent(event)) return this.pushFcmp(event);
    this.seq = event.seq;
    this.fold.pushRasp(event);
    const data = event.data;
    const base = this.base(event.ts);
    switch (data.type) {
      case 'lifecycle.started':
        return this.add({ ...base, kind: 'started', text: data.launch });
      case 'lifecycle.exited':
        return this.add({
          ...base,
          kind: 'exited',
          code: data.exit_code === null ? data.signal : String(data.exit_code),
          text: `${data.timed_out ? 'timed out; ' : ''}${data.canceled ? 'canceled; ' : ''}${Math.round(data.duration_ms)} ms`,
        });
      case 'engine.reasoning':
        return this.add({ ...base, kind: 'reasoning', text: boundText(data.text) });
      case 'engine.error':
        return this.add({ ...base, kind: 'error', text: boundText(data.message), level: data.fatal ? 'fatal' : null });
      case 'diagnostic':
        return this.add({
          ...base,
          kind: 'diagnostic',
          code: data.diagnostic.code,
          text: boundText(data.diagnostic.message),
          level: data.diagnostic.level,
        });
      default:
        return null;
    }
  }

  private pushFcmp(event: FcmpEvent): TimelineItem | null {
    if (event.type === 'assistant.message.final')
      return this.add({ ...this.base(event.ts), kind: 'message', text: boundText(event.data.text) });
    const call = this.fold.push(event);
    if (!call) return null;
    const existing = this.tools.get(call.callId);
    if (existing) {
      existing.tool = viewToolOf(call);
      return existing;
    }
    const item = this.add({ ...this.base(event.ts), kind: 'tool', tool: viewToolOf(call) });
    this.tools.set(call.callId, item);
    return item;
  }

  private base(ts: string): Omit<TimelineItem, 'kind'> {
    const at = Date.parse(ts);
    if (this.start === null && Number.isFinite(at)) this.start = at;
    return {
      seq: this.seq,
      ts,
      t: Number.isFinite(at) && this.start !== null ? Math.max(0, at - this.start) : 0,
      text: null,
      tool: null,
      code: null,
      level: null,
    };
  }

  private add(item: TimelineItem): TimelineItem {
    this.items.push(item);
    return item;
  }
}

/** The normalized form of a tool call that diffs align on: its kind and command (or name and input). */
export function toolKey(tool: Pick<ViewTool, 'kind' | 'name' | 'command' | 'input'>): string {
  if (tool.command !== null) return `${tool.kind}: ${tool.command.replace(/\s+/g, ' ').trim()}`;
  return `${tool.kind}: ${tool.kind === 'other' || tool.kind === 'mcp' ? tool.name : ''}`.trim();
}
