/**
 * RASP events → the items of an attempt's timeline. The same function reads a finished attempt's `rasp.N.jsonl`
 * and tails a running one (`agent-harness view`), so the live view and the report show the same thing. Tool calls
 * are normalized as in FCMP (the command without the engine's wrapper, the exit code made consistent); texts are
 * bounded ({@link MAX_VIEW_TEXT}): the whole output stays in the raw logs.
 */
import type { RaspEvent } from '../protocol/index.js';
import { normalizeResult, shellCommandOf } from '../translate/tool-calls.js';
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

/** The status of a tool call whose result has not come yet; `abandoned` once the engine exited without one. */
const RUNNING_TOOL_STATUS = 'running';

/** Builds timeline items from RASP events, in order; feed events with {@link push}, read {@link items}. */
export class TimelineBuilder {
  /** The items so far (a tool item is completed in place when its result arrives). */
  readonly items: TimelineItem[] = [];
  private readonly tools = new Map<string, ViewTool>();
  private start: number | null = null;

  /** @param modelExitCodes exit codes stated in the model requests (gemini's only source), by call id. */
  constructor(private readonly modelExitCodes: ReadonlyMap<string, number> = new Map()) {}

  /** Adds one event; returns the item it added or completed, or null when it shows nothing. */
  push(event: RaspEvent): TimelineItem | null {
    const at = Date.parse(event.ts);
    if (this.start === null && Number.isFinite(at)) this.start = at;
    const base = {
      seq: event.seq,
      ts: event.ts,
      t: Number.isFinite(at) && this.start !== null ? Math.max(0, at - this.start) : 0,
      text: null,
      tool: null,
      code: null,
      level: null,
    };
    const data = event.data;
    const add = (item: TimelineItem): TimelineItem => {
      this.items.push(item);
      return item;
    };
    switch (data.type) {
      case 'lifecycle.started':
        return add({ ...base, kind: 'started', text: data.launch });
      case 'lifecycle.exited':
        // The engine is gone: a call still running will get no result (its process outlived the turn).
        for (const tool of this.tools.values()) if (tool.status === RUNNING_TOOL_STATUS) tool.status = 'abandoned';
        return add({
          ...base,
          kind: 'exited',
          code: data.exit_code === null ? data.signal : String(data.exit_code),
          text: `${data.timed_out ? 'timed out; ' : ''}${data.canceled ? 'canceled; ' : ''}${Math.round(data.duration_ms)} ms`,
        });
      case 'engine.assistant.message':
        return data.final ? add({ ...base, kind: 'message', text: boundText(data.text) }) : null;
      case 'engine.reasoning':
        return add({ ...base, kind: 'reasoning', text: boundText(data.text) });
      case 'engine.error':
        return add({ ...base, kind: 'error', text: boundText(data.message), level: data.fatal ? 'fatal' : null });
      case 'diagnostic':
        return add({
          ...base,
          kind: 'diagnostic',
          code: data.diagnostic.code,
          text: boundText(data.diagnostic.message),
          level: data.diagnostic.level,
        });
      case 'engine.tool.call': {
        if (this.tools.has(data.call_id)) return null;
        const tool: ViewTool = {
          callId: data.call_id,
          kind: data.kind,
          name: data.name,
          command: data.kind === 'shell' ? shellCommandOf(data.input) : null,
          input: inputText(data.input),
          status: RUNNING_TOOL_STATUS,
          exitCode: null,
          output: null,
        };
        this.tools.set(data.call_id, tool);
        return add({ ...base, kind: 'tool', tool });
      }
      case 'engine.tool.result': {
        const tool = this.tools.get(data.call_id);
        if (!tool) return null;
        const result = normalizeResult(tool, data, this.modelExitCodes);
        tool.status = result.status;
        tool.exitCode = result.exitCode;
        tool.output = boundText(result.output);
        return this.items.find((item) => item.tool === tool) ?? null;
      }
      default:
        return null;
    }
  }
}

/** The normalized form of a tool call that diffs align on: its kind and command (or name and input). */
export function toolKey(tool: Pick<ViewTool, 'kind' | 'name' | 'command' | 'input'>): string {
  if (tool.command !== null) return `${tool.kind}: ${tool.command.replace(/\s+/g, ' ').trim()}`;
  return `${tool.kind}: ${tool.kind === 'other' || tool.kind === 'mcp' ? tool.name : ''}`.trim();
}
