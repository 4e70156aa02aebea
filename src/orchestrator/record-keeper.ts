/**
 * The RecordKeeper: the single writer of conversation history. It normalizes incoming messages, appends
 * turns, hands out frozen snapshots, and keeps statistics (turns, model calls, tokens, latency per phase).
 */
import * as z from 'zod';
import { AgentHarnessError } from '../errors/index.js';
import type { ConversationThread, ConversationTurn, HarnessTrace } from './types.js';

/** An incoming message: a string, or `{ role?, content }` with string content or `{ type: 'text', text }` parts. */
export const IncomingMessageSchema = z.union([
  z.string(),
  z.object({
    role: z.enum(['user', 'assistant']).optional(),
    content: z.union([z.string(), z.array(z.object({ type: z.literal('text'), text: z.string() }).passthrough())]),
  }),
]);
/** An incoming message before normalization. */
export type IncomingMessage = z.infer<typeof IncomingMessageSchema>;

/** Statistics of one phase. */
export interface PhaseStatistics {
  runs: number;
  errors: number;
  calls: number;
  inputTokens: number;
  outputTokens: number;
  /** Sum of the phase's wall times. */
  latencyMs: number;
}

/** Everything the RecordKeeper counted. */
export interface ConversationStatistics {
  turns: { user: number; assistant: number };
  phases: Record<string, PhaseStatistics>;
}

/** Normalizes message text: CRLF to LF, control characters (but tab and newline) dropped, trimmed. */
export function normalizeMessageText(text: string): string {
  // eslint-disable-next-line no-control-regex
  return text
    .replace(/\r\n?/g, '\n')
    .replace(/[\u0000-\u0008\u000b-\u001f\u007f]/g, '')
    .trim();
}

/** The single writer of conversation history. */
export class RecordKeeper {
  readonly #turns: ConversationTurn[] = [];
  readonly #phases = new Map<string, PhaseStatistics>();
  readonly #now: () => Date;

  constructor(options: { now?: () => Date } = {}) {
    this.#now = options.now ?? (() => new Date());
  }

  /** Normalizes `raw` and appends it as a user turn; returns the snapshot harnesses read. ORCHESTRATOR_INPUT_INVALID when empty or malformed. */
  ingest(raw: unknown): ConversationThread {
    const parsed = IncomingMessageSchema.safeParse(raw);
    if (!parsed.success)
      throw new AgentHarnessError(
        'ORCHESTRATOR_INPUT_INVALID',
        `Incoming message is not a string or { role, content }: ${parsed.error.issues[0]?.message ?? 'invalid'}.`,
      );
    const value = parsed.data;
    const content =
      typeof value === 'string'
        ? value
        : typeof value.content === 'string'
          ? value.content
          : value.content.map((part) => part.text).join('\n');
    if (typeof value !== 'string' && value.role === 'assistant')
      throw new AgentHarnessError(
        'ORCHESTRATOR_INPUT_INVALID',
        'Incoming messages are user turns; assistant turns are appended by the orchestrator.',
      );
    this.#push('user', content);
    return this.snapshot();
  }

  /** Appends an assistant turn (the Recover phase). */
  append(turn: { role: 'user' | 'assistant'; text: string }): void {
    this.#push(turn.role, turn.text);
  }

  /** The last `n` turns, oldest first (n >= 0 integer). */
  recent(n: number): ConversationTurn[] {
    if (!Number.isInteger(n) || n < 0)
      throw new AgentHarnessError('CONFIG_INVALID', `recent(n) needs an integer n >= 0, not ${String(n)}.`);
    return n === 0 ? [] : this.#turns.slice(-n).map((t) => ({ ...t }));
  }

  /** A frozen copy of the history. */
  snapshot(): ConversationThread {
    const turns = Object.freeze(this.#turns.map((t) => Object.freeze({ ...t })));
    const latest = [...turns].reverse().find((t) => t.role === 'user')?.text ?? '';
    return Object.freeze({ turns, latest });
  }

  /** Counts a phase run from its trace. */
  recordPhase(trace: HarnessTrace, failed: boolean): void {
    const stats = this.#phases.get(trace.phase) ?? {
      runs: 0,
      errors: 0,
      calls: 0,
      inputTokens: 0,
      outputTokens: 0,
      latencyMs: 0,
    };
    stats.runs += 1;
    if (failed) stats.errors += 1;
    stats.calls += trace.calls.length;
    for (const call of trace.calls) {
      stats.inputTokens += call.usage?.inputTokens ?? 0;
      stats.outputTokens += call.usage?.outputTokens ?? 0;
    }
    stats.latencyMs += trace.latencyMs;
    this.#phases.set(trace.phase, stats);
  }

  /** Statistics so far (a copy). */
  statistics(): ConversationStatistics {
    const user = this.#turns.filter((t) => t.role === 'user').length;
    return {
      turns: { user, assistant: this.#turns.length - user },
      phases: Object.fromEntries([...this.#phases].map(([k, v]) => [k, { ...v }])),
    };
  }

  #push(role: 'user' | 'assistant', raw: string): void {
    const text = normalizeMessageText(raw);
    if (!text)
      throw new AgentHarnessError(
        'ORCHESTRATOR_INPUT_INVALID',
        `A ${role} turn must have text; got ${JSON.stringify(raw.slice(0, 40))}.`,
      );
    this.#turns.push({ role, text, at: this.#now().toISOString() });
  }
}
