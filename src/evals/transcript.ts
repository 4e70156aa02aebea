/**
 * A trial's transcript as a judge reads it: a small mapper over FCMP (what the agent said, each tool call and its
 * result, how the conversation ended), one line per event, bounded.
 */
import type { FcmpEvent } from '../protocol/index.js';

/** One FCMP event as a transcript line, or null for events a judge has no use for (deltas, diagnostics). */
function line(event: FcmpEvent): string | null {
  const data = event.data as Record<string, unknown>;
  switch (event.type) {
    case 'assistant.message.final':
      return `assistant: ${String(data.text ?? '')}`;
    case 'tool.call': {
      const what = data.command ?? data.input_excerpt ?? '';
      return `tool call ${String(data.kind)} ${String(data.name)}: ${String(what)}`;
    }
    case 'tool.result': {
      const exit = data.exit_code === null || data.exit_code === undefined ? '' : `, exit ${String(data.exit_code)}`;
      return `tool result ${String(data.status)}${exit}: ${String(data.output_excerpt ?? '')}`;
    }
    case 'user.input.replied':
      return `user: ${String(data.text ?? data.message ?? '')}`;
    case 'conversation.completed':
      return `(conversation completed: ${String(data.reason ?? '')})`;
    case 'conversation.failed':
      return `(conversation failed: ${String(data.code ?? '')}: ${String(data.message ?? '')})`;
    default:
      return null;
  }
}

/** The transcript of `events`, at most `maxChars` characters (its end kept: how a trial ended matters most). */
export function fcmpTranscript(events: readonly FcmpEvent[], maxChars = 20_000): string {
  const text = events
    .map(line)
    .filter((l): l is string => l !== null)
    .join('\n');
  return text.length <= maxChars ? text : `[…${text.length - maxChars} characters cut…]\n${text.slice(-maxChars)}`;
}
