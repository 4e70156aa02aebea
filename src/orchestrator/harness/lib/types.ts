/**
 * Types the packaged harnesses share (seed 004's `harness/lib/types.ts`): each harness imports these and the
 * orchestrator's contracts, never another harness, so a harness can be swapped without touching the others.
 */
import * as z from 'zod';
import type { LLMToolCall } from '../../types.js';

/** The intent the intent harness produces (and the response harness reads). */
export const IntentSchema = z.object({
  intent: z.string().min(1),
  topics: z.array(z.string()).default([]),
  done: z.boolean().default(false),
});
/** The intent the intent harness produces (and the response harness reads). */
export type Intent = z.infer<typeof IntentSchema>;

/** The intent used before (or instead of) a parsed answer; the orchestrator's fallback when intent fails. */
export function defaultIntent(): Intent {
  return { intent: 'unknown', topics: [], done: false };
}

/** Input of the intent harness. */
export interface IntentInput {
  message: string;
}

/** Input of the memory harness. */
export interface MemoryInput {
  query: string;
}

/** What memory recalled (the stub recalls nothing). */
export interface MemoryOutput {
  /** Earlier turns recalled, as `role: text` lines. */
  memories: string[];
  /** A note about them (the LLM-backed memory's summary; empty from the stub). */
  note: string;
}

/** Memory's output when it recalled nothing; the orchestrator's fallback when memory fails. */
export function emptyMemory(): MemoryOutput {
  return { memories: [], note: '' };
}

/** Input of the response harness: the latest message, the intent and what memory recalled. */
export interface ResponseInput {
  message: string;
  intent: Intent;
  memories: MemoryOutput;
}

/** What the response harness produces: the reply text and any tool calls the model asked for. */
export interface ResponseOutput {
  text: string;
  toolCalls: LLMToolCall[];
}

/** A utility task (outside the turn's phases); the LLM-backed utility knows `title`. */
export interface UtilityInput {
  task: 'title' | (string & {});
}

/** A utility task's result: `text` is null when the harness does not do that task (the stub does none). */
export interface UtilityOutput {
  task: string;
  text: string | null;
}
