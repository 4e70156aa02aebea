/**
 * The iterative intent harness: asks the intent model, refines, and stops on a blank answer, a `done` flag
 * or the iteration limit (whichever first); the stop reason and iteration count are in the trace notes.
 */
import {
  traceCall,
  type BoundLLMCaller,
  type Harness,
  type HarnessContext,
  type HarnessRunResult,
  type HarnessTrace,
} from '../../types.js';
import { defaultIntent, IntentSchema, type Intent, type IntentInput } from '../lib/types.js';
import { buildIntentPrompt } from './prompts.js';

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

/** The iterative intent harness: `new IntentHarness(bindModel(caller, config.models.intent), maxIterations?, stream?)`. */
export class IntentHarness implements Harness<IntentInput, Intent> {
  constructor(
    private readonly llm: BoundLLMCaller,
    private readonly maxIterations = 4,
    private readonly stream = false,
  ) {}

  /** Asks, refines and stops (blank answer, `done`, or the iteration limit); never chooses the model. */
  async run(input: IntentInput, ctx: HarnessContext): Promise<HarnessRunResult<Intent>> {
    let intent = defaultIntent();
    const answers: string[] = [];
    const calls: HarnessTrace['calls'] = [];
    let stopReason: IntentStopReason = 'max_iterations';
    for (let i = 0; i < this.maxIterations; i += 1) {
      const response = await this.llm.call({
        messages: buildIntentPrompt(input.message, answers, this.maxIterations),
        temperature: 0,
        stream: this.stream,
        ...(ctx.signal ? { signal: ctx.signal } : {}),
      });
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
