/** Intent-only tool: the message's content words, so the intent model sees what the user talks about. */
const STOP_WORDS = new Set([
  'the',
  'and',
  'for',
  'you',
  'are',
  'was',
  'what',
  'with',
  'this',
  'that',
  'have',
  'from',
  'about',
  'please',
  'can',
  'tell',
  'message',
]);

/** Lower-case words of 3+ letters, stop words dropped, first occurrence order, at most `limit`. */
export function extractKeywords(message: string, limit = 8): string[] {
  const words = message.toLowerCase().match(/[\p{L}\p{N}]{3,}/gu) ?? [];
  return [...new Set(words.filter((w) => !STOP_WORDS.has(w)))].slice(0, limit);
}
