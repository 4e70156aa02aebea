/**
 * The iterative intent harness: asks the intent model, refines, and stops on a blank answer, a `done` flag
 * or the iteration limit (whichever first); the stop reason and iteration count are in the trace notes.
 */
import { z } from 'zod';
import { traceCall, type BoundLLMCaller, type Harness, type HarnessContext, type HarnessRunResult, type HarnessTrace } from 'agent-harness/orchestrator';
import { buildIntentPrompt } from './prompts.js';

/** The intent the harness produces. */
export const IntentSchema = z.object({ intent: z.string().min(1), topics: z.array(z.string()).default([]), done: z.boolean().default(false) });
/** The intent the harness produces. */
export type Intent = z.infer<typeof IntentSchema>;

/** The intent used before (or instead of) a parsed answer. */
export function defaultIntent(): Intent {
  return { intent: 'unknown', topics: [], done: false };
}

/** Parses an intent answer; null when it is not a JSON intent. */
export function parseIntent(text: string): Intent | null {
  const json = text.match(/\{[\s\S]*\}/)?.[0];
  if (!json) return null;
  try {
    const parsed = IntentSchema.safeParse(JSON.parse(json));
    return parsed.success ? parsed.data : null;
  } catch {
    return null;
  }
}

/** Why the loop stopped. */
export type IntentStopReason = 'blank' | 'done' | 'max_iterations';

/** The iterative intent harness. */
export class IntentHarness implements Harness<{ message: string }, Intent> {
  constructor(
    private readonly llm: BoundLLMCaller,
    private readonly maxIterations = 4,
    private readonly stream = false,
  ) {}

  async run(input: { message: string }, ctx: HarnessContext): Promise<HarnessRunResult<Intent>> {
    let intent = defaultIntent();
    const answers: string[] = [];
    const calls: HarnessTrace['calls'] = [];
    let stopReason: IntentStopReason = 'max_iterations';
    for (let i = 0; i < this.maxIterations; i += 1) {
      const response = await this.llm.call({ messages: buildIntentPrompt(input.message, answers, this.maxIterations), temperature: 0, stream: this.stream, ...(ctx.signal ? { signal: ctx.signal } : {}) });
      calls.push(traceCall(response));
      if (!response.text.trim()) {
        stopReason = 'blank';
        break;
      }
      answers.push(response.text);
      const parsed = parseIntent(response.text);
      intent = parsed ?? intent;
      if (parsed?.done) {
        stopReason = 'done';
        break;
      }
    }
    return { output: intent, done: true, trace: { calls, notes: { iterations: calls.length, stopReason } } };
  }
}
