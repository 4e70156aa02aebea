/**
 * The memory harness: recalls earlier turns of the conversation that share words with the query (most
 * relevant, then most recent, first), then asks the memory model to condense them into one note.
 * In-memory recall over the RecordKeeper's snapshot; nothing is persisted.
 */
import { traceCall, type BoundLLMCaller, type Harness, type HarnessContext, type HarnessRunResult } from 'agent-harness/orchestrator';
import { earlierTurns } from '../lib/prompts.js';

/** What memory recalled. */
export interface MemoryOutput {
  /** Earlier turns recalled, as `role: text` lines. */
  memories: string[];
  /** The memory model's note about them. */
  note: string;
}

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

/** The memory harness. */
export class MemoryHarness implements Harness<{ query: string }, MemoryOutput> {
  constructor(
    private readonly llm: BoundLLMCaller,
    private readonly limit = 3,
    private readonly stream = false,
  ) {}

  async run(input: { query: string }, ctx: HarnessContext): Promise<HarnessRunResult<MemoryOutput>> {
    const memories = recallTurns(earlierTurns(ctx.conversation.turns), input.query, this.limit);
    const response = await this.llm.call({
      messages: [
        { role: 'system', content: `${MEMORY_MARKER} Condense the recalled conversation lines into one short note for the assistant.` },
        { role: 'user', content: `Query: ${input.query}\nRecalled:\n${memories.map((m) => `- ${m}`).join('\n') || '(nothing yet)'}` },
      ],
      temperature: 0,
      stream: this.stream,
      ...(ctx.signal ? { signal: ctx.signal } : {}),
    });
    return { output: { memories, note: response.text.trim() }, done: true, trace: { calls: [traceCall(response)], notes: { recalled: memories.length } } };
  }
}
