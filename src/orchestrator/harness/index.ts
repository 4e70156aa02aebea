/** The packaged harnesses of seed 004: intent, response, memory and utility (stubs by default, LLM-backed opt-in). */
export * from './lib/types.js';
export { turnsToMessages, earlierTurns } from './lib/prompts.js';
export { IntentHarness, parseIntent, type IntentStopReason } from './intent/intent-harness.js';
export { INTENT_MARKER, INTENT_SYSTEM_PROMPT, buildIntentPrompt } from './intent/prompts.js';
export { detectQuestion } from './intent/tools/detect-question.js';
export { extractKeywords } from './intent/tools/extract-keywords.js';
export { ResponseHarness } from './respond/response-harness.js';
export {
  RESPOND_MARKER,
  ASSISTANT_SYSTEM_PROMPT,
  buildResponsePrompt,
  type ResponsePromptInput,
} from './respond/prompts.js';
export { MemoryHarness } from './memory/memory-harness.js';
export { LlmMemoryHarness, MEMORY_MARKER, recallTurns } from './memory/llm-memory-harness.js';
export { UtilityHarness } from './utility/utility-harness.js';
export { LlmUtilityHarness, UTILITY_MARKER } from './utility/llm-utility-harness.js';
