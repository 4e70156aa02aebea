/** Intent-only tool: whether the message asks something (a question mark or a leading question word). */
export function detectQuestion(message: string): boolean {
  return (
    /\?\s*$/.test(message) ||
    /^(who|what|when|where|why|how|which|do|does|did|can|could|is|are|will|would)\b/i.test(message.trim())
  );
}
