/**
 * Rewriting streamed tool-call arguments (the Chat Completions wire's `rewriteStream`). A Chat Completions stream
 * sends a tool call's arguments in fragments (`delta.tool_calls[].function.arguments`), so a value (a cassette's run
 * directory path) can straddle two events and escape a chunk-by-chunk rewrite. Here the fragments of each tool call
 * are joined, rewritten, and given back as the first fragment (the following ones empty): the number of events and
 * the chunk boundaries are kept. Chunks that are not whole `data:` events are left as they are.
 */
import type { StreamChunk } from './wire-api.js';

interface Fragment {
  chunk: number;
  event: number;
  delta: { arguments?: unknown };
}

/** The JSON events of one chunk, or null when the chunk is not whole `data: {…}` events. */
function eventsOf(data: string): Array<Record<string, unknown> | string> | null {
  if (!data.endsWith('\n\n')) return null;
  const out: Array<Record<string, unknown> | string> = [];
  for (const block of data.slice(0, -2).split('\n\n')) {
    if (!block.startsWith('data: ') || block.includes('\n')) return null;
    const payload = block.slice('data: '.length);
    if (payload === '[DONE]') {
      out.push(payload);
      continue;
    }
    try {
      out.push(JSON.parse(payload) as Record<string, unknown>);
    } catch {
      return null;
    }
  }
  return out;
}

/** Rewrites the streamed arguments of Chat Completions tool calls with `rewrite`, each call's fragments joined. */
export function rewriteChatToolArguments(
  chunks: readonly StreamChunk[],
  rewrite: (text: string) => string,
): StreamChunk[] {
  const parsed = chunks.map((chunk) => eventsOf(chunk.data));
  const calls = new Map<string, Fragment[]>();
  parsed.forEach((events, chunk) => {
    events?.forEach((event, index) => {
      if (typeof event === 'string') return;
      const choices = Array.isArray(event.choices) ? event.choices : [];
      for (const choice of choices as Array<{ index?: number; delta?: { tool_calls?: unknown } }>) {
        const toolCalls = Array.isArray(choice.delta?.tool_calls) ? choice.delta.tool_calls : [];
        for (const call of toolCalls as Array<{ index?: number; function?: { arguments?: unknown } }>) {
          if (!call.function || typeof call.function.arguments !== 'string') continue;
          const key = `${choice.index ?? 0}:${call.index ?? 0}`;
          const list = calls.get(key) ?? [];
          list.push({ chunk, event: index, delta: call.function });
          calls.set(key, list);
        }
      }
    });
  });
  const changed = new Set<number>();
  for (const fragments of calls.values()) {
    const whole = fragments.map((f) => f.delta.arguments as string).join('');
    const rewritten = rewrite(whole);
    if (rewritten === whole) continue;
    fragments.forEach((fragment, i) => {
      fragment.delta.arguments = i === 0 ? rewritten : '';
      changed.add(fragment.chunk);
    });
  }
  return chunks.map((chunk, index) => {
    const events = parsed[index];
    if (!changed.has(index) || !events) return chunk;
    const data = events
      .map((event) => `data: ${typeof event === 'string' ? event : JSON.stringify(event)}\n\n`)
      .join('');
    return { delay_ms: chunk.delay_ms, data };
  });
}
