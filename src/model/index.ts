/** The scripted model server: scripts, wire APIs, server. */
export * from './script.js';
export * from './wire-api.js';
export * from './tool-table.js';
export { openAiResponsesWire } from './wire-openai-responses.js';
export { openAiChatWire, isChatSideRequest, CHAT_SIDE_TITLE } from './wire-openai-chat.js';
export {
  anthropicMessagesWire,
  anthropicErrorType,
  isAnthropicJsonSchemaRequest,
  sampleFromSchema,
} from './wire-anthropic-messages.js';
export {
  geminiWire,
  geminiJsonSchema,
  isGeminiSideRequest,
  geminiSideAnswer,
  geminiSampleFromSchema,
  geminiErrorStatus,
} from './wire-gemini.js';
export * from './server.js';
export * from './serve.js';
