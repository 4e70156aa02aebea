/** The response harness's system prompt (the seed's BernardSystemPrompt) and prompt builder. */
import type { ChatMessage, ConversationTurn } from '../../types.js';
import { earlierTurns, turnsToMessages } from '../lib/prompts.js';
import type { Intent, MemoryOutput } from '../lib/types.js';

/** Marker the scripted server's routes may match on. */
export const RESPOND_MARKER = '[assistant:respond]';

/** The assistant's system prompt. */
export const ASSISTANT_SYSTEM_PROMPT = `${RESPOND_MARKER} You are a concise, friendly assistant. Use the intent and the memories below; do not invent earlier conversation.`;

/** What the response prompt is built from. */
export interface ResponsePromptInput {
  message: string;
  intent: Pick<Intent, 'intent' | 'topics'>;
  memories: MemoryOutput;
  turns: readonly ConversationTurn[];
  historyWindow: number;
}

/** System prompt with intent and memories, the recent history, then the latest message. */
export function buildResponsePrompt(input: ResponsePromptInput): ChatMessage[] {
  const recalled = input.memories.memories.map((m) => `- ${m}`).join('\n') || '- (none)';
  const system = `${ASSISTANT_SYSTEM_PROMPT}\nIntent: ${input.intent.intent} (topics: ${input.intent.topics.join(', ') || 'none'})\nMemories:\n${recalled}\nMemory note: ${input.memories.note || '(none)'}`;
  const history = input.historyWindow === 0 ? [] : earlierTurns(input.turns).slice(-input.historyWindow);
  return [{ role: 'system', content: system }, ...turnsToMessages(history), { role: 'user', content: input.message }];
}
