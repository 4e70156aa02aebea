/**
 * An attempt as an ATIF v1.7 trajectory (Harbor's RFC 0001), derived from its audit: FCMP is the normalized
 * conversation (final messages, tool calls with their normalized command, tool results with normalized exit codes
 * and status), RASP adds what FCMP does not carry (reasoning, token usage, a tool's full input and output). The two
 * streams are read in their live order (`translate/attempt-events.ts`: each FCMP event right after the RASP event it
 * was derived from), so reasoning and usage land where they happened.
 *
 * Steps: the attempt's user message (the prompt of a start, the reply of a resume) is a `user` step; agent steps
 * follow the one-inference-per-step convention as far as the engine's output shows it: a new agent step starts when
 * the agent speaks, reasons or calls a tool after its previous step's tool results came back, or speaks after
 * calling tools. Tool results go to the step that made the call (`observation.results[].source_call_id`).
 */
import type { EngineId, FcmpEvent, RaspEvent, Usage } from '../protocol/index.js';
import { interleaveEvents, isFcmpEvent } from '../translate/attempt-events.js';
import { stripDoneMarker } from '../translate/done-marker.js';
import {
  ATIF_SCHEMA_VERSION,
  type AtifMetrics,
  type AtifObservationResult,
  type AtifStep,
  type AtifToolCall,
  type AtifTrajectory,
} from './atif-schema.js';

/** What the audit knows about the attempt besides its events (from `run.json` and `meta.N.json`). */
export interface AtifContext {
  runId: string;
  attempt: number;
  engine: EngineId;
  /** The engine CLI's version (`meta.engine_version`); "unknown" when not recorded. */
  engineVersion?: string | null;
  /** The model the engine was asked to use, when an agent option named it. */
  modelName?: string | null;
  /** The user's message of a started attempt (the run's prompt); a resume's reply comes from FCMP. */
  prompt?: string | null;
  /** The session id, when the events carry none. */
  sessionId?: string | null;
  /** The recorded verdict (`meta.completion`). */
  completion?: { state: string; reason: string; code?: string | undefined } | null;
  /** The attempt's total usage (`meta.usage`), used when the engine printed no usage event. */
  usage?: Usage | null;
  /** Wall time of the attempt. */
  durationMs?: number | null;
  /** The run's handle, recorded in `extra`. */
  handle?: string | null;
  /**
   * The engine's `input_tokens` leave out the cached tokens (its adapter's `cacheReportedApart`): `prompt_tokens`,
   * which includes them, adds them back.
   */
  cacheReportedApart?: boolean;
}

/** The audit events of one attempt: FCMP always; RASP when its file is there (reasoning, usage, whole outputs). */
export interface AtifEvents {
  fcmp: readonly FcmpEvent[];
  rasp?: readonly RaspEvent[] | null;
}

type ContentEvent = Extract<
  FcmpEvent,
  { type: 'assistant.message.final' | 'assistant.message.delta' | 'tool.call' | 'tool.result' }
>;

type Item =
  | { kind: 'reasoning'; ts: string; text: string }
  | { kind: 'usage'; ts: string; usage: Usage }
  | { kind: 'fcmp'; event: ContentEvent; rasp: RaspEvent | null }
  | { kind: 'user'; ts: string; text: string };

interface AgentDraft {
  source: 'agent';
  ts: string;
  messages: Array<{ id: string; text: string; final: boolean }>;
  reasoning: string[];
  calls: AtifToolCall[];
  results: AtifObservationResult[];
  usage: Usage | null;
}
interface UserDraft {
  source: 'user' | 'system';
  ts: string;
  text: string;
  extra?: Record<string, unknown>;
}

function isContent(event: FcmpEvent): event is ContentEvent {
  return (
    event.type === 'assistant.message.final' ||
    event.type === 'assistant.message.delta' ||
    event.type === 'tool.call' ||
    event.type === 'tool.result'
  );
}

/** True when `fcmp` was derived from `rasp` (the translator emits it for that event). */
function derivedFrom(fcmp: ContentEvent, rasp: RaspEvent): boolean {
  const data = rasp.data;
  switch (fcmp.type) {
    case 'assistant.message.final':
      return data.type === 'engine.assistant.message' && data.final && data.message_id === fcmp.data.message_id;
    case 'assistant.message.delta':
      return data.type === 'engine.assistant.message' && !data.final && data.message_id === fcmp.data.message_id;
    case 'tool.call':
      return data.type === 'engine.tool.call' && data.call_id === fcmp.data.call_id;
    case 'tool.result':
      return data.type === 'engine.tool.result' && data.call_id === fcmp.data.call_id;
  }
}

/** FCMP and RASP in one ordered list of what the steps are made of (their live order, `attempt-events.ts`). */
function alignedItems(events: AtifEvents): Item[] {
  const items: Item[] = [];
  for (const event of events.fcmp)
    if (event.type === 'user.input.replied') items.push({ kind: 'user', ts: event.ts, text: event.data.text });
  let last: RaspEvent | null = null;
  for (const event of interleaveEvents(events.rasp ?? [], events.fcmp)) {
    if (isFcmpEvent(event)) {
      if (!isContent(event)) continue;
      // Each FCMP event follows the RASP event it derives from; one no RASP event accounts for comes at the end.
      const origin = last && derivedFrom(event, last) ? last : null;
      items.push({ kind: 'fcmp', event, rasp: origin });
      last = null;
      continue;
    }
    last = event;
    const data = event.data;
    if (data.type === 'engine.reasoning') {
      if (data.text.trim() !== '') items.push({ kind: 'reasoning', ts: event.ts, text: data.text });
    } else if (data.type === 'engine.usage') items.push({ kind: 'usage', ts: event.ts, usage: data.usage });
  }
  return items;
}

function argumentsOf(input: unknown, command: string | null): Record<string, unknown> {
  if (input !== null && typeof input === 'object' && !Array.isArray(input)) return input as Record<string, unknown>;
  if (typeof input === 'string') {
    try {
      const parsed: unknown = JSON.parse(input);
      if (parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed))
        return parsed as Record<string, unknown>;
    } catch {
      // a plain string argument
    }
    return command !== null && command === input ? { command } : { input };
  }
  if (input === undefined || input === null) return command !== null ? { command } : {};
  return { input };
}

function addUsage(a: Usage | null, b: Usage): Usage {
  if (!a) return { ...b };
  const sum = (x: number | null | undefined, y: number | null | undefined): number | null =>
    x === null || x === undefined ? (y ?? null) : y === null || y === undefined ? x : x + y;
  return {
    input_tokens: sum(a.input_tokens, b.input_tokens),
    output_tokens: sum(a.output_tokens, b.output_tokens),
    cached_input_tokens: sum(a.cached_input_tokens, b.cached_input_tokens),
    reasoning_output_tokens: sum(a.reasoning_output_tokens, b.reasoning_output_tokens),
  };
}

function metricsOf(cacheReportedApart: boolean, usage: Usage): AtifMetrics {
  const cached = usage.cached_input_tokens ?? null;
  const input = usage.input_tokens;
  const prompt = input === null ? null : cacheReportedApart ? input + (cached ?? 0) : input;
  const metrics: AtifMetrics = {};
  if (prompt !== null) metrics.prompt_tokens = prompt;
  if (usage.output_tokens !== null) metrics.completion_tokens = usage.output_tokens;
  if (cached !== null) metrics.cached_tokens = cached;
  if (usage.reasoning_output_tokens !== null && usage.reasoning_output_tokens !== undefined)
    metrics.extra = { reasoning_tokens: usage.reasoning_output_tokens };
  return metrics;
}

function toStep(draft: AgentDraft | UserDraft, stepId: number, cacheReportedApart: boolean): AtifStep {
  if (draft.source !== 'agent') {
    return {
      step_id: stepId,
      timestamp: draft.ts,
      source: draft.source,
      message: draft.text,
      ...(draft.extra ? { extra: draft.extra } : {}),
    };
  }
  const step: AtifStep = {
    step_id: stepId,
    timestamp: draft.ts,
    source: 'agent',
    // The done marker is the harness's contract with the agent, not what it said: the audit keeps it, the step not.
    message: draft.messages
      .map((m) => stripDoneMarker(m.text) ?? '')
      .filter((text) => text !== '')
      .join('\n\n'),
  };
  if (draft.reasoning.length > 0) step.reasoning_content = draft.reasoning.join('\n\n');
  if (draft.calls.length > 0) step.tool_calls = draft.calls;
  if (draft.results.length > 0) step.observation = { results: draft.results };
  if (draft.usage) step.metrics = metricsOf(cacheReportedApart, draft.usage);
  return step;
}

/** Builds the steps from the aligned items. */
function buildSteps(items: readonly Item[], context: AtifContext, firstTs: string): Array<AgentDraft | UserDraft> {
  const drafts: Array<AgentDraft | UserDraft> = [];
  if (context.prompt) drafts.push({ source: 'user', ts: firstTs, text: context.prompt });
  const state: { current: AgentDraft | null } = { current: null };
  const byCall = new Map<string, AgentDraft>();
  const open = (ts: string): AgentDraft => {
    state.current = { source: 'agent', ts, messages: [], reasoning: [], calls: [], results: [], usage: null };
    drafts.push(state.current);
    return state.current;
  };
  const ensure = (ts: string): AgentDraft => state.current ?? open(ts);
  for (const item of items) {
    switch (item.kind) {
      case 'user':
        drafts.push({ source: 'user', ts: item.ts, text: item.text });
        state.current = null;
        break;
      case 'reasoning': {
        const step: AgentDraft =
          state.current && (state.current.messages.length > 0 || state.current.calls.length > 0)
            ? open(item.ts)
            : ensure(item.ts);
        step.reasoning.push(item.text);
        break;
      }
      case 'usage': {
        const last =
          state.current ?? [...drafts].reverse().find((d): d is AgentDraft => d.source === 'agent') ?? open(item.ts);
        last.usage = addUsage(last.usage, item.usage);
        break;
      }
      case 'fcmp': {
        const event = item.event;
        if (event.type === 'assistant.message.final' || event.type === 'assistant.message.delta') {
          const final = event.type === 'assistant.message.final';
          const own: AgentDraft | null = state.current;
          const existing = own?.messages.find((m) => m.id === event.data.message_id);
          if (own && existing) {
            existing.text = final ? event.data.text : existing.final ? existing.text : existing.text + event.data.text;
            existing.final ||= final;
            break;
          }
          const step: AgentDraft =
            own && (own.calls.length > 0 || own.messages.length > 0) ? open(event.ts) : ensure(event.ts);
          step.messages.push({ id: event.data.message_id, text: event.data.text, final });
        } else if (event.type === 'tool.call') {
          const step: AgentDraft =
            state.current && state.current.results.length > 0 ? open(event.ts) : ensure(event.ts);
          const input =
            item.rasp?.data.type === 'engine.tool.call'
              ? item.rasp.data.input
              : (event.data.input_excerpt ?? undefined);
          const extra: Record<string, unknown> = { kind: event.data.kind };
          if (event.data.command !== null) extra.command = event.data.command;
          step.calls.push({
            tool_call_id: event.data.call_id,
            function_name: event.data.name || event.data.kind,
            arguments: argumentsOf(input, event.data.command),
            extra,
          });
          byCall.set(event.data.call_id, step);
        } else {
          const output =
            item.rasp?.data.type === 'engine.tool.result' && item.rasp.data.output !== null
              ? item.rasp.data.output
              : event.data.output_excerpt;
          const extra = { status: event.data.status, exit_code: event.data.exit_code };
          const owner = byCall.get(event.data.call_id);
          if (owner) owner.results.push({ source_call_id: event.data.call_id, content: output, extra });
          else ensure(event.ts).results.push({ content: output, extra: { ...extra, call_id: event.data.call_id } });
        }
        break;
      }
    }
  }
  return drafts;
}

/**
 * The ATIF v1.7 trajectory of one attempt. Deterministic: the same events and context give the same document
 * (timestamps are the events' own).
 */
export function buildAtifTrajectory(events: AtifEvents, context: AtifContext): AtifTrajectory {
  const items = alignedItems(events);
  const firstTs = events.fcmp[0]?.ts ?? events.rasp?.[0]?.ts ?? new Date(0).toISOString();
  const drafts = buildSteps(items, context, firstTs);
  const terminal = [...events.fcmp]
    .reverse()
    .find(
      (e) =>
        e.type === 'conversation.completed' || e.type === 'conversation.failed' || e.type === 'user.input.required',
    );
  const completion = context.completion ?? completionOf(terminal);
  if (drafts.length === 0) {
    // Nothing was said: one system step records how the attempt ended, so the trajectory is not empty.
    drafts.push({
      source: 'system',
      ts: terminal?.ts ?? firstTs,
      text: `The agent produced no message or tool call; the attempt ended ${completion?.state ?? 'unknown'}${completion ? ` (${completion.reason})` : ''}.`,
      extra: { completion },
    });
  }
  const apart = context.cacheReportedApart === true;
  const steps = drafts.map((draft, index) => toStep(draft, index + 1, apart));
  const sessionId =
    [...events.fcmp].reverse().find((e) => e.session_id !== null)?.session_id ?? context.sessionId ?? null;
  let total: Usage | null = null;
  for (const item of items) if (item.kind === 'usage') total = addUsage(total, item.usage);
  total ??= context.usage ?? null;
  const totals = total ? metricsOf(apart, total) : null;
  const toolCalls = steps.reduce((n, s) => n + (s.tool_calls?.length ?? 0), 0);
  const diagnostics = events.fcmp.filter((e) => e.type === 'diagnostic.warning').map((e) => e.data.code);
  const finalExtra: Record<string, unknown> = { tool_calls: toolCalls, completion: completion ?? null };
  if (context.durationMs !== undefined && context.durationMs !== null) finalExtra.duration_ms = context.durationMs;
  if (totals?.extra) finalExtra.reasoning_tokens = totals.extra.reasoning_tokens;
  const trajectory: AtifTrajectory = {
    schema_version: ATIF_SCHEMA_VERSION,
    ...(sessionId ? { session_id: sessionId } : {}),
    trajectory_id: `${context.runId}.${context.attempt}`,
    agent: {
      name: context.engine,
      version: context.engineVersion || 'unknown',
      ...(context.modelName ? { model_name: context.modelName } : {}),
    },
    steps,
    final_metrics: {
      ...(totals?.prompt_tokens !== undefined ? { total_prompt_tokens: totals.prompt_tokens } : {}),
      ...(totals?.completion_tokens !== undefined ? { total_completion_tokens: totals.completion_tokens } : {}),
      ...(totals?.cached_tokens !== undefined ? { total_cached_tokens: totals.cached_tokens } : {}),
      total_steps: steps.length,
      extra: finalExtra,
    },
    extra: {
      producer: 'agent-harness',
      run_id: context.runId,
      ...(context.handle ? { handle: context.handle } : {}),
      attempt: context.attempt,
      ...(diagnostics.length > 0 ? { diagnostics } : {}),
    },
  };
  return trajectory;
}

function completionOf(terminal: FcmpEvent | undefined): AtifContext['completion'] {
  if (!terminal) return null;
  if (terminal.type === 'conversation.completed') return { state: 'completed', reason: terminal.data.reason };
  if (terminal.type === 'user.input.required') return { state: 'awaiting_input', reason: terminal.data.reason };
  if (terminal.type === 'conversation.failed')
    return { state: 'failed', reason: terminal.data.message, code: terminal.data.code };
  return null;
}
