/** Binds a caller to a model, so model choice stays in the orchestrator's config and out of harnesses. */
import type { BoundLLMCaller, LLMCaller } from './types.js';

/** A caller that uses `model` unless a call names its own. */
export function bindModel(caller: LLMCaller, model: string): BoundLLMCaller {
  return { model, call: (input) => caller.call({ ...input, model: input.model ?? model }) };
}
