/** Prompt helpers shared by the packaged harnesses: conversation turns to chat messages. */
import type { ChatMessage, ConversationTurn } from '../../types.js';

/** Chat messages for `turns`, oldest first. */
export function turnsToMessages(turns: readonly ConversationTurn[]): ChatMessage[] {
  return turns.map((turn) => ({ role: turn.role, content: turn.text }));
}

/** The turns before the latest user message (the history a prompt shows). */
export function earlierTurns(turns: readonly ConversationTurn[]): ConversationTurn[] {
  const lastUser = turns.map((t) => t.role).lastIndexOf('user');
  return lastUser < 0 ? [...turns] : turns.slice(0, lastUser);
}
