/** Live and replay stand-ins for agent instances: live records each call, replay answers from the recording. */
import { AgentHarnessError } from '../errors/index.js';
import type { EventBus } from './events.js';
import { describeRecordingEntry, type Recording, type RecordingEntry } from './recording.js';

/** Anything with methods; agents need not share a base class. */
export type AgentLike = object;

/** Keeps the ordered entries of a live run, or walks them in a replay. */
export class CallLedger {
  readonly entries: RecordingEntry[] = [];
  private cursor = 0;

  constructor(private readonly replay?: Recording) {}

  /** Appends an entry of a live run. */
  record(entry: RecordingEntry): void {
    this.entries.push(entry);
  }

  /** Takes the next replayed entry, which must be `wanted`; otherwise a FLUENT_REPLAY_MISMATCH naming both. */
  take(wanted: RecordingEntry): RecordingEntry {
    const entries = this.replay?.entries ?? [];
    const next = entries[this.cursor];
    const wantedName = describeRecordingEntry(wanted);
    if (next === undefined) {
      throw new AgentHarnessError('FLUENT_REPLAY_MISMATCH', `Replay: the harness asked for ${wantedName} (entry ${this.cursor + 1}) but the recording has only ${entries.length} entries.`, { details: { wanted: wantedName, index: this.cursor } });
    }
    if (describeRecordingEntry(next) !== wantedName) {
      throw new AgentHarnessError('FLUENT_REPLAY_MISMATCH', `Replay: the harness asked for ${wantedName} at entry ${this.cursor + 1} but the recording has ${describeRecordingEntry(next)} there.`, { details: { wanted: wantedName, recorded: describeRecordingEntry(next), index: this.cursor } });
    }
    this.cursor += 1;
    return next;
  }

  /** After a replay: every recorded entry must have been used. */
  assertConsumed(): void {
    const entries = this.replay?.entries ?? [];
    if (this.cursor < entries.length) {
      throw new AgentHarnessError('FLUENT_REPLAY_MISMATCH', `Replay: the harness finished but ${describeRecordingEntry(entries[this.cursor]!)} (entry ${this.cursor + 1}) and ${entries.length - this.cursor - 1} more recorded entries were never asked for.`, { details: { index: this.cursor } });
    }
  }
}

/** The run handle of a provider-backed call's output, if it has one. */
function findHandle(output: unknown): string | undefined {
  if (output === null || typeof output !== 'object') return undefined;
  const handle = (output as Record<string, unknown>).handle;
  return typeof handle === 'string' ? handle : undefined;
}

/** Wraps a live agent: each method call is awaited, recorded with its args and output (or error), and emitted. */
export function recordAgent<T extends AgentLike>(name: string, agent: T, ledger: CallLedger, bus: EventBus): T {
  return new Proxy(agent, {
    get(target, key, receiver) {
      const value = Reflect.get(target, key, receiver) as unknown;
      if (typeof value !== 'function' || typeof key !== 'string') return value;
      return async (...args: unknown[]) => {
        try {
          const output = await (value as (...a: unknown[]) => unknown).apply(target, args);
          const handle = findHandle(output);
          ledger.record({ kind: 'call', agent: name, method: key, args, output, ...(handle ? { handle } : {}) });
          bus.emit('agent:call', { name: `${name}.${key}`, agent: name, method: key, ...(handle ? { handle } : {}) });
          return output;
        } catch (error) {
          ledger.record({ kind: 'call', agent: name, method: key, args, error: error instanceof Error ? error.message : String(error) });
          throw error;
        }
      };
    },
  });
}

/** A replay agent: never constructed, every method answers the next recorded call (or re-throws its error). */
export function replayAgent(name: string, ledger: CallLedger, bus: EventBus): AgentLike {
  return new Proxy({}, {
    get(_target, key) {
      if (typeof key !== 'string' || key === 'then') return undefined;
      return async (..._args: unknown[]) => {
        const entry = ledger.take({ kind: 'call', agent: name, method: key, args: [] });
        if (entry.kind !== 'call') throw new Error('unreachable: take() matched a step');
        if (entry.error !== undefined) throw new Error(entry.error);
        bus.emit('agent:call', { name: `${name}.${key}`, agent: name, method: key, replayed: true, ...(entry.handle ? { handle: entry.handle } : {}) });
        return entry.output;
      };
    },
  });
}
