/**
 * The LLM-backed memory harness (opt-in; the default `MemoryHarness` is a stub): recalls earlier turns of the
 * conversation that share words with the query (most relevant, then most recent, first), then asks the memory
 * model to condense them into one note — one model call per turn. In-memory recall over the RecordKeeper's
 * snapshot; nothing is persisted.
 */
import {
  traceCall,
  type BoundLLMCaller,
  type Harness,
  type HarnessContext,
  type HarnessRunResult,
} from '../../types.js';
import { earlierTurns } from '../lib/prompts.js';
import type { MemoryInput, MemoryOutput } from '../lib/types.js';

/** Marker the scripted server's routes may match on. */
export const MEMORY_MARKER = '[assistant:memory]';

function words(text: string): Set<string> {
  return new Set(text.toLowerCase().match(/[\p{L}\p{N}]{3,}/gu) ?? []);
}

/** The earlier turns most related to `query`: by shared words, then recency; at most `limit`. */
export function recallTurns(turns: readonly { role: string; text: string }[], query: string, limit = 3): string[] {
  const wanted = words(query);
  return turns
    .map((turn, index) => ({ turn, index, score: [...words(turn.text)].filter((w) => wanted.has(w)).length }))
    .sort((a, b) => b.score - a.score || b.index - a.index)
    .slice(0, limit)
    .sort((a, b) => a.index - b.index)
    .map(({ turn }) => `${turn.role}: ${turn.text}`);
}

/** The LLM-backed memory harness: `new LlmMemoryHarness(bindModel(caller, config.models.memory), limit?, stream?)`. */
export class LlmMemoryHarness implements Harness<MemoryInput, MemoryOutput> {
  constructor(
    private readonly llm: BoundLLMCaller,
    private readonly limit = 3,
    private readonly stream = false,
  ) {}

  /** Recalls related earlier turns and has the memory model condense them. */
  async run(input: MemoryInput, ctx: HarnessContext): Promise<HarnessRunResult<MemoryOutput>> {
    const memories = recallTurns(earlierTurns(ctx.conversation.turns), input.query, this.limit);
    const response = await this.llm.call({
      messages: [
        {
          role: 'system',
          content: `${MEMORY_MARKER} Condense the recalled conversation lines into one short note for the assistant.`,
        },
        {
          role: 'user',
          content: `Query: ${input.query}\nRecalled:\n${memories.map((m) => `- ${m}`).join('\n') || '(nothing yet)'}`,
        },
      ],
      temperature: 0,
      stream: this.stream,
      ...(ctx.signal ? { signal: ctx.signal } : {}),
    });
    return {
      output: { memories, note: response.text.trim() },
      done: true,
      trace: { calls: [traceCall(response)], notes: { recalled: memories.length } },
    };
  }
}
