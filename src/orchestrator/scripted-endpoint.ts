/**
 * Test face: a scripted model server on 127.0.0.1 plus a real HTTP caller pointed at it, so a test builds an
 * orchestrator over the wire in two lines and reads `server.requests` as its evidence.
 */
import type { ModelScript, ModelServer } from '../model/index.js';
import { startModelServer } from '../engines/model-server.js';
import { createAnthropicMessagesCaller } from './anthropic-messages-caller.js';
import { createOpenAiChatCaller, type HttpCallerOptions } from './openai-chat-caller.js';
import type { LLMCaller } from './types.js';

/** A scripted endpoint and its caller. */
export interface ScriptedEndpoint {
  server: ModelServer;
  caller: LLMCaller;
  /** Stops the server. */
  close(): Promise<void>;
}

/** Starts the scripted server with `script` and a caller of `wire` (default OpenAI Chat) bound to it. */
export async function startScriptedEndpoint(
  script: ModelScript,
  options: { wire?: 'openai-chat' | 'anthropic-messages' } & Omit<Partial<HttpCallerOptions>, 'baseURL'> = {},
): Promise<ScriptedEndpoint> {
  const server = await startModelServer({ script });
  const { wire = 'openai-chat', ...rest } = options;
  const settings = { apiKey: 'scripted-no-key', ...rest };
  const caller =
    wire === 'openai-chat'
      ? createOpenAiChatCaller({ ...settings, baseURL: `${server.url}/v1` })
      : createAnthropicMessagesCaller({ ...settings, baseURL: server.url });
  return { server, caller, close: () => server.close() };
}
