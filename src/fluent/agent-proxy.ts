/**
 * Live and replay stand-ins for agent instances: live records each call, replay answers from the recording.
 * Both keep a method's kind: a synchronous method returns its value, an async one a promise.
 */
import { AgentHarnessError } from '../errors/index.js';
import { describeError, type EventBus } from './events.js';
import { describeRecordingEntry, type Recording, type RecordingEntry } from './recording.js';

/** Anything with methods; agents need not share a base class. */
export type AgentLike = object;

type NarrativeEntry = Extract<RecordingEntry, { kind: 'narrative' }>;

/** Keeps the ordered entries of a live run, or walks them in a replay. */
export class CallLedger {
  readonly entries: RecordingEntry[] = [];
  private cursor = 0;

  /** `onNarrative` re-emits recorded narratives in a replay, at the point they were recorded. */
  constructor(
    private readonly replay?: Recording,
    private readonly onNarrative: (entry: NarrativeEntry) => void = () => undefined,
  ) {}

  /** Appends an entry of a live run. */
  record(entry: RecordingEntry): void {
    this.entries.push(entry);
  }

  /** Re-emits the recorded narratives at the cursor (replay). */
  private drainNarratives(): void {
    const entries = this.replay?.entries ?? [];
    for (let next = entries[this.cursor]; next?.kind === 'narrative'; next = entries[this.cursor]) {
      this.cursor += 1;
      this.onNarrative(next);
    }
  }

  /** Takes the next replayed entry, which must be `wanted`; otherwise a FLUENT_REPLAY_MISMATCH naming both. */
  take(wanted: RecordingEntry): RecordingEntry {
    this.drainNarratives();
    const entries = this.replay?.entries ?? [];
    const next = entries[this.cursor];
    const wantedName = describeRecordingEntry(wanted);
    if (next === undefined) {
      throw new AgentHarnessError(
        'FLUENT_REPLAY_MISMATCH',
        `Replay: the harness asked for ${wantedName} (entry ${this.cursor + 1}) but the recording has only ${entries.length} entries.`,
        { details: { wanted: wantedName, index: this.cursor } },
      );
    }
    if (describeRecordingEntry(next) !== wantedName) {
      throw new AgentHarnessError(
        'FLUENT_REPLAY_MISMATCH',
        `Replay: the harness asked for ${wantedName} at entry ${this.cursor + 1} but the recording has ${describeRecordingEntry(next)} there.`,
        { details: { wanted: wantedName, recorded: describeRecordingEntry(next), index: this.cursor } },
      );
    }
    this.cursor += 1;
    return next;
  }

  /** After a replay: every recorded entry must have been used (trailing narratives are re-emitted first). */
  assertConsumed(): void {
    this.drainNarratives();
    const entries = this.replay?.entries ?? [];
    if (this.cursor < entries.length) {
      throw new AgentHarnessError(
        'FLUENT_REPLAY_MISMATCH',
        `Replay: the harness finished but ${describeRecordingEntry(entries[this.cursor]!)} (entry ${this.cursor + 1}) and ${entries.length - this.cursor - 1} more recorded entries were never asked for.`,
        { details: { index: this.cursor } },
      );
    }
  }
}

/** The run handle of a provider-backed call's output, if it has one. */
function findHandle(output: unknown): string | undefined {
  if (output === null || typeof output !== 'object') return undefined;
  const handle = (output as Record<string, unknown>).handle;
  return typeof handle === 'string' ? handle : undefined;
}

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return (
    value !== null &&
    (typeof value === 'object' || typeof value === 'function') &&
    typeof (value as { then?: unknown }).then === 'function'
  );
}

/**
 * Wraps a live agent: each method call emits `agent:start`, then `agent:complete` (or `agent:failed`) when it
 * settles, and is recorded with its args and output (or error). A synchronous method stays synchronous.
 */
export function recordAgent<T extends AgentLike>(name: string, agent: T, ledger: CallLedger, bus: EventBus): T {
  return new Proxy(agent, {
    get(target, key, receiver) {
      const value = Reflect.get(target, key, receiver) as unknown;
      if (typeof value !== 'function' || typeof key !== 'string' || key === 'constructor') return value;
      return (...args: unknown[]) => {
        const base = { name: `${name}.${key}`, agent: name, method: key };
        const failed = (error: unknown, sync: boolean): void => {
          ledger.record({
            kind: 'call',
            agent: name,
            method: key,
            args,
            error: error instanceof Error ? error.message : String(error),
            ...(sync ? { sync } : {}),
          });
          bus.emit('agent:failed', { ...base, ...describeError(error) });
        };
        const completed = (output: unknown, sync: boolean): void => {
          const handle = findHandle(output);
          ledger.record({
            kind: 'call',
            agent: name,
            method: key,
            args,
            output,
            ...(handle ? { handle } : {}),
            ...(sync ? { sync } : {}),
          });
          bus.emit('agent:complete', { ...base, result: output, ...(handle ? { handle } : {}) });
        };
        bus.emit('agent:start', base);
        let output: unknown;
        try {
          output = (value as (...a: unknown[]) => unknown).apply(target, args);
        } catch (error) {
          failed(error, true);
          throw error;
        }
        if (!isThenable(output)) {
          completed(output, true);
          return output;
        }
        return Promise.resolve(output).then(
          (resolved) => {
            completed(resolved, false);
            return resolved;
          },
          (error: unknown) => {
            failed(error, false);
            throw error;
          },
        );
      };
    },
  });
}

/**
 * A replay agent: never constructed; every method answers the next recorded call (or re-throws its error),
 * synchronously when the live method was synchronous, with the same agent events as live plus `replayed: true`.
 */
export function replayAgent(name: string, ledger: CallLedger, bus: EventBus): AgentLike {
  return new Proxy(
    {},
    {
      get(_target, key) {
        if (typeof key !== 'string' || key === 'then') return undefined;
        return (..._args: unknown[]) => {
          const base = { name: `${name}.${key}`, agent: name, method: key, replayed: true };
          bus.emit('agent:start', base);
          const entry = ledger.take({ kind: 'call', agent: name, method: key, args: [] });
          if (entry.kind !== 'call') throw new Error('unreachable: take() matched another kind of entry');
          if (entry.error !== undefined) {
            const error = new Error(entry.error);
            bus.emit('agent:failed', { ...base, ...describeError(error) });
            if (entry.sync) throw error;
            return Promise.reject(error);
          }
          bus.emit('agent:complete', {
            ...base,
            result: entry.output,
            ...(entry.handle ? { handle: entry.handle } : {}),
          });
          return entry.sync ? entry.output : Promise.resolve(entry.output);
        };
      },
    },
  );
}
