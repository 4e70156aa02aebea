/**
 * The factory: builds the LLM caller for a wire API, binds one per phase to the config's model, and wires
 * the packaged harnesses into an Orchestrator. Only this file (and config.ts) knows which model a phase uses.
 * Memory and utility are stubs by default; this assistant opts into their LLM-backed versions.
 */
import {
  bindModel,
  createAnthropicMessagesCaller,
  createOpenAiChatCaller,
  defaultIntent,
  emptyMemory,
  IntentHarness,
  LlmMemoryHarness,
  LlmUtilityHarness,
  Orchestrator,
  RecordKeeper,
  ResponseHarness,
  type Intent,
  type LLMCaller,
  type MemoryOutput,
  type OrchestratorConfig,
} from 'agent-harness/orchestrator';

/** The wire APIs the example speaks. */
export type AssistantWire = 'openai-chat' | 'anthropic-messages';

/** An HTTP caller for `wire`; `baseURL` is the server root (the OpenAI client gets `/v1` appended). */
export function createWireCaller(
  wire: AssistantWire,
  baseURL: string,
  apiKey: string,
  config: OrchestratorConfig,
): LLMCaller {
  const retry = { maxRetries: config.limits.maxRetries };
  const root = baseURL.replace(/\/+$/, '');
  return wire === 'openai-chat'
    ? createOpenAiChatCaller({
        baseURL: root.endsWith('/v1') ? root : `${root}/v1`,
        apiKey,
        timeoutMs: config.timeouts.callMs,
        retry,
      })
    : createAnthropicMessagesCaller({
        baseURL: root.replace(/\/v1$/, ''),
        apiKey,
        timeoutMs: config.timeouts.callMs,
        retry,
      });
}

/** The wired assistant. */
export interface Assistant {
  orchestrator: Orchestrator<Intent, MemoryOutput>;
  recordKeeper: RecordKeeper;
  config: OrchestratorConfig;
}

/** Wires the harnesses with `caller` bound to each phase's model. */
export function createAssistant(caller: LLMCaller, config: OrchestratorConfig): Assistant {
  const recordKeeper = new RecordKeeper();
  const { models, limits, stream } = config;
  const orchestrator = new Orchestrator<Intent, MemoryOutput>(
    recordKeeper,
    {
      intent: new IntentHarness(bindModel(caller, models.intent), limits.intentMaxIterations, stream),
      memory: new LlmMemoryHarness(bindModel(caller, models.memory), 3, stream),
      respond: new ResponseHarness(bindModel(caller, models.respond), limits.historyWindow, stream),
      utility: new LlmUtilityHarness(bindModel(caller, models.utility)),
      fallback: { intent: defaultIntent(), memory: emptyMemory() },
    },
    config,
  );
  return { orchestrator, recordKeeper, config };
}
