/**
 * Where an attempt's time goes: the harness's own steps (model server, namespaces, skills, config, snapshots,
 * sealing) and the engine's run, in milliseconds, recorded in `meta.timings.steps`. A step measured twice (a
 * retried write) adds up. Cheap enough to run on every attempt: two `performance.now()` calls per step.
 */
import { performance } from 'node:perf_hooks';

/** Records named steps of one attempt. */
export class StepClock {
  private readonly steps: Record<string, number> = {};
  private last = performance.now();

  /** Ends the step running since the previous mark (or since the clock was made) and names it. */
  mark(step: string): void {
    const now = performance.now();
    this.steps[step] = (this.steps[step] ?? 0) + (now - this.last);
    this.last = now;
  }

  /** The steps so far, rounded to 0.1 ms, in the order they first ended. */
  record(): Record<string, number> {
    return Object.fromEntries(Object.entries(this.steps).map(([step, ms]) => [step, Math.round(ms * 10) / 10]));
  }
}
