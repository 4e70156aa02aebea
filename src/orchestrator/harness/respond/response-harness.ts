/** The response harness: one call to the response model with intent, memories and recent history. */
import {
  traceCall,
  type BoundLLMCaller,
  type Harness,
  type HarnessContext,
  type HarnessRunResult,
} from '../../types.js';
import type { ResponseInput, ResponseOutput } from '../lib/types.js';
import { buildResponsePrompt } from './prompts.js';

/** The response harness: `new ResponseHarness(bindModel(caller, config.models.respond), historyWindow?, stream?)`. */
export class ResponseHarness implements Harness<ResponseInput, ResponseOutput> {
  constructor(
    private readonly llm: BoundLLMCaller,
    private readonly historyWindow = 12,
    private readonly stream = false,
  ) {}

  /** One call; the reply text (trimmed) and the tool calls the model asked for. */
  async run(input: ResponseInput, ctx: HarnessContext): Promise<HarnessRunResult<ResponseOutput>> {
    const messages = buildResponsePrompt({
      ...input,
      turns: ctx.conversation.turns,
      historyWindow: this.historyWindow,
    });
    const response = await this.llm.call({
      messages,
      stream: this.stream,
      ...(ctx.signal ? { signal: ctx.signal } : {}),
    });
    return {
      output: { text: response.text.trim(), toolCalls: response.toolCalls ?? [] },
      done: true,
      trace: { calls: [traceCall(response)] },
    };
  }
}
