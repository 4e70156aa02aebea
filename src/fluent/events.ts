/** The in-order event bus shared by every fluent helper (seed 002); the event types are in event-types.ts. */
import { AgentHarnessError } from '../errors/index.js';
import { isHarnessEventType, type HarnessEvent, type HarnessEventName, type HarnessEventType } from './event-types.js';

export * from './event-types.js';

/** Removes `K` from each member of a union. */
type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;

/** What `EventBus.emit(type, data)` takes for `type`: the event's fields without `type` and `timestamp`. */
export type EventData<T extends HarnessEventName> = DistributiveOmit<
  Extract<HarnessEvent, { type: T }>,
  'type' | 'timestamp'
>;

interface Subscription {
  filter: string;
  handler: (event: HarnessEvent) => void;
}

/** True when an `.on()` filter selects an event type ('retry' selects 'retry:start' etc.). */
export function matchesEventFilter(filter: string, type: string): boolean {
  return filter === '*' || filter === type || type.startsWith(`${filter}:`);
}

/** Throws CONFIG_INVALID when `filter` is not a filter `.on()` accepts (for JavaScript callers; TypeScript rejects it at compile time). */
export function assertEventFilter(filter: unknown): asserts filter is HarnessEventType {
  if (!isHarnessEventType(filter)) {
    throw new AgentHarnessError(
      'CONFIG_INVALID',
      `.on(${JSON.stringify(filter)}): not an event type. Use '*', a family (phase, task, retry, parallel, agent, run, custom), an exact type such as 'task:start', 'step', 'narrative' or 'error', or 'custom:<name>'.`,
      { details: { filter } },
    );
  }
}

/** Collects events in emission order and dispatches them synchronously, so handlers see them in that order. */
export class EventBus {
  readonly events: HarnessEvent[] = [];
  private readonly subscriptions: Subscription[] = [];

  /** Adds a handler for the events matching `filter` (CONFIG_INVALID for an unknown filter). */
  subscribe(filter: string, handler: (event: HarnessEvent) => void): void {
    assertEventFilter(filter);
    this.subscriptions.push({ filter, handler });
  }

  /** Records and dispatches one event, stamping its time. */
  emit<T extends HarnessEventName>(type: T, data: EventData<T>): HarnessEvent {
    const event = { ...data, type, timestamp: new Date() } as unknown as HarnessEvent;
    this.events.push(event);
    for (const { filter, handler } of this.subscriptions) {
      if (!matchesEventFilter(filter, type)) continue;
      try {
        handler(event);
      } catch (error) {
        // A faulty listener must not change the workflow's outcome; it is reported, not thrown.
        if (type !== 'error') {
          const described = describeError(error);
          this.emit('error', {
            name: 'handler',
            message: `An .on('${filter}') listener threw on ${type}: ${described.error}`,
            ...described,
          });
        }
      }
    }
    return event;
  }
}

/** The failure fields every failed/failure event carries: message, stack and the original error as cause. */
export function describeError(error: unknown): { error: string; stack?: string; cause: unknown } {
  if (error instanceof Error)
    return { error: error.message, ...(error.stack ? { stack: error.stack } : {}), cause: error };
  return { error: String(error), cause: error };
}

/** Serialises events one per line (`type`, `name`, `timestamp` first); causes are dropped (not JSON). */
export function formatEventLog(events: readonly HarnessEvent[]): string {
  return (
    events
      .map((event) => {
        const { cause: _cause, type, name, timestamp, ...rest } = event as HarnessEvent & { cause?: unknown };
        return JSON.stringify({ type, name, timestamp, ...rest });
      })
      .join('\n') + (events.length ? '\n' : '')
  );
}
