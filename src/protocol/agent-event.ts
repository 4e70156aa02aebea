/**
 * AgentEvent (seed 003): the provider-level view of an attempt — `session`, `message` (text, tool_use,
 * tool_result, thinking, system_init), `complete` and `error` — derived live from the same parser output as
 * RASP/FCMP. `raw` is the engine's own event (its JSON line, or the line's text).
 */
import * as z from 'zod';

/** Normalized kinds of a message. */
export const AgentMessageKindSchema = z.enum(['text', 'tool_use', 'tool_result', 'thinking', 'system_init']);

/** A tool call as FCMP normalized it (the same values every view shows; `status` is `running` until its result). */
export const AgentToolSchema = z.object({
  callId: z.string(),
  kind: z.string(),
  name: z.string(),
  command: z.string().nullable(),
  status: z.string(),
  exitCode: z.number().int().nullable(),
});

/** One message's content; `text` for a final message (as FCMP has it), `tool` for a tool_use or tool_result. */
export const AgentMessageContentSchema = z.object({
  raw: z.unknown(),
  kind: AgentMessageKindSchema,
  text: z.string().optional(),
  tool: AgentToolSchema.optional(),
});
/** One message's content. */
export type AgentMessageContent = z.infer<typeof AgentMessageContentSchema>;

/** How a query ended. */
export const AgentResultSchema = z.object({
  success: z.boolean(),
  usage: z
    .object({ inputTokens: z.number(), outputTokens: z.number(), cachedTokens: z.number().optional() })
    .optional(),
  errors: z.array(z.string()).optional(),
});
/** How a query ended. */
export type AgentResult = z.infer<typeof AgentResultSchema>;

/** One event of a query. */
export const AgentEventSchema = z.object({
  type: z.enum(['session', 'message', 'complete', 'error']),
  sessionId: z.string().optional(),
  content: AgentMessageContentSchema.optional(),
  result: AgentResultSchema.optional(),
  error: z.string().optional(),
  diagnostics: z.unknown().optional(),
});
/** One event of a query. */
export type AgentEvent = z.infer<typeof AgentEventSchema>;
