/** The utility harness: an LLM-assisted helper outside the turn's phases — here, a title for the conversation. */
import { traceCall, type BoundLLMCaller, type Harness, type HarnessContext, type HarnessRunResult } from 'agent-harness/orchestrator';

/** Marker the scripted server's routes may match on. */
export const UTILITY_MARKER = '[assistant:utility]';

/** Titles the conversation so far. */
export class UtilityHarness implements Harness<{ task: 'title' }, { title: string }> {
  constructor(private readonly llm: BoundLLMCaller) {}

  async run(_input: { task: 'title' }, ctx: HarnessContext): Promise<HarnessRunResult<{ title: string }>> {
    const transcript = ctx.conversation.turns.map((t) => `${t.role}: ${t.text}`).join('\n');
    const response = await this.llm.call({
      messages: [
        { role: 'system', content: `${UTILITY_MARKER} Give the conversation a title of at most six words.` },
        { role: 'user', content: transcript || '(empty conversation)' },
      ],
      temperature: 0,
      ...(ctx.signal ? { signal: ctx.signal } : {}),
    });
    return { output: { title: response.text.trim() }, done: true, trace: { calls: [traceCall(response)] } };
  }
}
