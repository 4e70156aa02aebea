/** The response harness: one call to the response model with intent, memories and recent history. */
import { traceCall, type BoundLLMCaller, type Harness, type HarnessContext, type HarnessRunResult, type ResponseOutput } from 'agent-harness/orchestrator';
import type { Intent } from '../intent/intent.harness.js';
import type { MemoryOutput } from '../memory/memory.harness.js';
import { buildResponsePrompt } from './prompts.js';

/** The response harness. */
export class ResponseHarness implements Harness<{ message: string; intent: Intent; memories: MemoryOutput }, ResponseOutput> {
  constructor(
    private readonly llm: BoundLLMCaller,
    private readonly historyWindow = 12,
    private readonly stream = false,
  ) {}

  async run(input: { message: string; intent: Intent; memories: MemoryOutput }, ctx: HarnessContext): Promise<HarnessRunResult<ResponseOutput>> {
    const messages = buildResponsePrompt({ ...input, turns: ctx.conversation.turns, historyWindow: this.historyWindow });
    const response = await this.llm.call({ messages, stream: this.stream, ...(ctx.signal ? { signal: ctx.signal } : {}) });
    return { output: { text: response.text.trim() }, done: true, trace: { calls: [traceCall(response)] } };
  }
}
