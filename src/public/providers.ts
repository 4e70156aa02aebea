/**
 * `agent-harness/providers`: AgentProvider and its registry over every engine (seed 003).
 */
export * from '../providers/index.js';
export {
  AgentEventSchema,
  AgentMessageContentSchema,
  AgentResultSchema,
  AgentToolSchema,
} from '../protocol/agent-event.js';
export type { AgentEvent, AgentMessageContent, AgentResult } from '../protocol/agent-event.js';
export { streamAttempt } from '../core/attempt-stream.js';
export type { AttemptStream } from '../core/attempt-stream.js';
export { isFcmpEvent, type AttemptEvent } from '../translate/attempt-events.js';
