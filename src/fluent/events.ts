/** Event types and the in-order event bus shared by every fluent helper (seed 002). */

/** Filter names accepted by `.on()`: a family ('phase'), an exact type ('phase:start') or '*'. */
export type HarnessEventType =
  | 'phase' | 'task' | 'step' | 'narrative' | 'error' | 'retry' | 'parallel' | 'agent' | '*'
  | (string & {});

/** One emitted event. `type` is the full type ('task:failed'); `name` and `timestamp` are always present. */
export interface HarnessEvent {
  type: string;
  name: string;
  timestamp: Date;
  [key: string]: unknown;
}

/** Handler for `.on()`; a throwing handler does not stop the harness (its error is recorded as an `error` event). */
export type HarnessEventHandler = (event: HarnessEvent) => void;

interface Subscription { filter: string; handler: HarnessEventHandler }

/** True when an `.on()` filter selects an event type ('retry' selects 'retry:start' etc.). */
export function matchesEventFilter(filter: string, type: string): boolean {
  return filter === '*' || filter === type || type.startsWith(`${filter}:`);
}

/** Collects events in emission order and dispatches them synchronously, so handlers see them in that order. */
export class EventBus {
  readonly events: HarnessEvent[] = [];
  private readonly subscriptions: Subscription[] = [];

  /** Adds a handler for the events matching `filter`. */
  subscribe(filter: string, handler: HarnessEventHandler): void {
    this.subscriptions.push({ filter, handler });
  }

  /** Records and dispatches one event, stamping its time. */
  emit(type: string, data: Record<string, unknown> & { name: string }): HarnessEvent {
    const event: HarnessEvent = { ...data, type, name: data.name, timestamp: new Date() };
    this.events.push(event);
    for (const { filter, handler } of this.subscriptions) {
      if (!matchesEventFilter(filter, type)) continue;
      try {
        handler(event);
      } catch (error) {
        // A faulty listener must not change the workflow's outcome; it is reported, not thrown.
        if (type !== 'error') this.emit('error', { name: 'handler', message: describeError(error).error, cause: error });
      }
    }
    return event;
  }
}

/** The failure fields every failed/failure event carries: message, stack and the original error as cause. */
export function describeError(error: unknown): { error: string; stack?: string; cause: unknown } {
  if (error instanceof Error) return { error: error.message, stack: error.stack, cause: error };
  return { error: String(error), cause: error };
}

/** Serialises events one per line (`type`, `name`, `timestamp` first); causes are dropped (not JSON). */
export function formatEventLog(events: HarnessEvent[]): string {
  return events.map(({ cause: _cause, type, name, timestamp, ...rest }) => JSON.stringify({ type, name, timestamp, ...rest })).join('\n') + (events.length ? '\n' : '');
}
