/**
 * Gates of script routes: a request on a gate waits until `size` requests of that gate are waiting, then all
 * are released together; `timeout_ms` bounds the wait so a sequential client is answered (late) rather than
 * hung. The release count is recorded, so a log proves two requests were in flight at the same time.
 */
import type { ScriptRoute } from './script.js';

/** How a gated request was released: with how many others (itself included), or by timeout. */
export interface GateRelease {
  name: string;
  released_with: number;
  timed_out: boolean;
}

/** A set of named gates for one server. */
export interface RouteGates {
  /** Waits at the route's gate; resolves immediately (null) when the route has none. */
  pass(route: ScriptRoute | null): Promise<GateRelease | null>;
  /** Releases every waiter (server closing). */
  releaseAll(): void;
}

/** Creates the gates of one server. */
export function createRouteGates(): RouteGates {
  const waiting = new Map<string, Array<(release: GateRelease) => void>>();
  const open = (name: string, timedOut: boolean): void => {
    const list = waiting.get(name) ?? [];
    waiting.delete(name);
    for (const resolve of list) resolve({ name, released_with: list.length, timed_out: timedOut });
  };
  return {
    pass(route) {
      const gate = route?.gate;
      if (!gate) return Promise.resolve(null);
      return new Promise<GateRelease>((resolve) => {
        const timer = setTimeout(() => {
          const list = waiting.get(gate.name);
          const index = list?.indexOf(done) ?? -1;
          if (list && index >= 0) list.splice(index, 1);
          resolve({ name: gate.name, released_with: 1, timed_out: true });
        }, gate.timeout_ms);
        timer.unref();
        function done(release: GateRelease): void {
          clearTimeout(timer);
          resolve(release);
        }
        const list = waiting.get(gate.name) ?? [];
        list.push(done);
        waiting.set(gate.name, list);
        if (list.length >= gate.size) open(gate.name, false);
      });
    },
    releaseAll() {
      for (const name of [...waiting.keys()]) open(name, false);
    },
  };
}
