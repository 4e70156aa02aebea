/**
 * The orchestrator's contracts (seed 004): LLM callers, harnesses and their results. Data that crosses a
 * boundary (incoming messages, conversation turns) has a zod schema; the rest are plain interfaces.
 */
import * as z from 'zod';
import type { AgentHarnessError } from '../errors/index.js';
import type { HarnessContextConfig } from './config.js';

/** One chat message sent to a model. */
export const ChatMessageSchema = z
  .object({ role: z.enum(['system', 'user', 'assistant']), content: z.string() })
  .strict();
/** One chat message sent to a model. */
export type ChatMessage = z.infer<typeof ChatMessageSchema>;

/** One model call. `model` is filled by a bound caller (see `bindModel`); harnesses never choose it. */
export interface LLMCallConfig {
  model: string;
  messages: ChatMessage[];
  temperature?: number;
  maxTokens?: number;
  /** Use the wire API's SSE stream (the text is assembled from the deltas). */
  stream?: boolean;
  /** Aborts the call (and any retry wait): LLM_ABORTED. */
  signal?: AbortSignal;
}

/** Token counts reported by the endpoint. */
export interface LLMUsage {
  inputTokens: number;
  outputTokens: number;
}

/** A tool call the model asked for. */
export interface LLMToolCall {
  id: string;
  name: string;
  /** JSON text of the arguments, as sent. */
  arguments: string;
}

/** What a model call returned. */
export interface LLMResponse {
  text: string;
  toolCalls: LLMToolCall[];
  model: string;
  usage: LLMUsage | null;
  /** Wall time of the call, retries included. */
  latencyMs: number;
  /** HTTP attempts made (1 = no retry). */
  attempts: number;
}

/** Calls a model. Real callers speak HTTP; `createScriptedCaller` answers from a list for unit tests. */
export interface LLMCaller {
  call(input: LLMCallConfig): Promise<LLMResponse>;
}

/** A caller whose model is fixed by the orchestrator's config. */
export interface BoundLLMCaller {
  /** The model every call uses unless the call names one (e.g. `ctx.config.intentModel`). */
  readonly model: string;
  call(input: Omit<LLMCallConfig, 'model'> & { model?: string }): Promise<LLMResponse>;
}

/** One turn of the conversation as the RecordKeeper stores it. */
export const ConversationTurnSchema = z
  .object({ role: z.enum(['user', 'assistant']), text: z.string().min(1), at: z.string() })
  .strict();
/** One stored conversation turn. */
export type ConversationTurn = z.infer<typeof ConversationTurnSchema>;

/** A read-only snapshot of the conversation; harnesses read it, only the RecordKeeper writes history. */
export interface ConversationThread {
  readonly turns: readonly ConversationTurn[];
  /** The latest user message. */
  readonly latest: string;
}

/** One model call as a phase trace records it. */
export interface LLMCallTrace {
  model: string;
  latencyMs: number;
  attempts: number;
  usage: LLMUsage | null;
}

/** What a phase did: its timing and its model calls. */
export interface HarnessTrace {
  phase: string;
  startedAt: string;
  endedAt: string;
  latencyMs: number;
  calls: LLMCallTrace[];
  /** Harness-specific notes (iterations, stop reason…). */
  notes?: Record<string, unknown>;
}

/** A harness failure, carried in the result instead of thrown out of the orchestrator. */
export type HarnessError = AgentHarnessError;

/** The result of one harness run. */
export interface HarnessRunResult<T> {
  output: T;
  done: boolean;
  /** A harness fills `calls` and `notes`; the orchestrator fills the phase name and timing. */
  trace?: Partial<HarnessTrace>;
  error?: HarnessError;
}

/** A harness result after the orchestrator ran it as a phase: the trace is complete. */
export interface PhaseResult<T> extends HarnessRunResult<T> {
  trace: HarnessTrace;
}

/** What every harness run receives; `config` has the per-phase model names (`ctx.config.intentModel`…). */
export interface HarnessContext<TConfig = HarnessContextConfig> {
  conversation: ConversationThread;
  config: TConfig;
  now: () => Date;
  /** Aborts the whole turn. */
  signal?: AbortSignal;
}

/** A small unit of work in one phase. Harnesses never import each other. */
export interface Harness<TIn, TOut> {
  run(input: TIn, ctx: HarnessContext): Promise<HarnessRunResult<TOut>>;
}

/** The trace entry of a response. */
export function traceCall(response: LLMResponse): LLMCallTrace {
  return { model: response.model, latencyMs: response.latencyMs, attempts: response.attempts, usage: response.usage };
}
