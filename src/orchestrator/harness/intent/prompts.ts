/** The intent harness's system prompt and prompt builder (kept beside the harness, per seed 004). */
import type { ChatMessage } from '../../types.js';
import { detectQuestion } from './tools/detect-question.js';
import { extractKeywords } from './tools/extract-keywords.js';

/** Marker the scripted server's routes may match on. */
export const INTENT_MARKER = '[assistant:intent]';

/** The intent system prompt. */
export const INTENT_SYSTEM_PROMPT = `${INTENT_MARKER} You classify the user's latest message. Answer with one JSON object:
{"intent": "<short label>", "topics": ["..."], "done": <true when you are sure>}. Answer with nothing to stop.`;

/** Messages for iteration `iteration` (0-based); earlier answers are replayed so the model can refine them. */
export function buildIntentPrompt(message: string, previous: string[], maxIterations: number): ChatMessage[] {
  const facts = `keywords: ${extractKeywords(message).join(', ') || '(none)'}; question: ${detectQuestion(message) ? 'yes' : 'no'}`;
  const messages: ChatMessage[] = [
    { role: 'system', content: `${INTENT_SYSTEM_PROMPT}\nTool facts: ${facts}` },
    { role: 'user', content: `Message: ${message}` },
  ];
  previous.forEach((answer, i) => {
    messages.push({ role: 'assistant', content: answer });
    messages.push({
      role: 'user',
      content: `Iteration ${i + 2} of ${maxIterations}: refine the intent, or set "done": true.`,
    });
  });
  return messages;
}
