/** Binds a caller to a model, so model choice stays in the orchestrator's config and out of harnesses. */
import type { BoundLLMCaller, LLMCaller } from './types.js';

/** A caller that always uses `model`. */
export function bindModel(caller: LLMCaller, model: string): BoundLLMCaller {
  return { model, call: (input) => caller.call({ ...input, model }) };
}
