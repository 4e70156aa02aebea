/**
 * Time budgets that grow with the machine's load. Every wait in the suite is a condition with a deadline, and every
 * deadline for work that scales with load (a process start, a build, a browser) comes from here, so a loaded 2-core
 * machine gets longer, not a fixed budget that a quiet machine needed. No test asserts a duration: a budget only
 * bounds how long a test waits for a condition that fails the test when it never holds.
 *
 * The factor is 1 + the 1-minute load average per core (so 1 on an idle machine, 6 at a load of 10 on 2 cores),
 * 1.5 times that under `CI` (shared runners), capped at 10. `AGENT_HARNESS_TEST_TIME_SCALE=<number>` sets it
 * instead (a slow machine whose load average says little, e.g. a throttled container).
 */
import os from 'node:os';

/** The largest factor: past it, a test that still waits is more likely hung than slow. */
const MAX_FACTOR = 10;

/** The environment variable that sets the factor instead of the load. */
export const TIME_SCALE_ENV = 'AGENT_HARNESS_TEST_TIME_SCALE';

/** The factor now (read at each call: a wait that starts later under more load gets more). */
export function loadFactor(env: NodeJS.ProcessEnv = process.env, load: number = os.loadavg()[0] ?? 0): number {
  const forced = env[TIME_SCALE_ENV];
  if (forced !== undefined && forced !== '') {
    const value = Number(forced);
    if (!Number.isFinite(value) || value <= 0)
      throw new Error(`${TIME_SCALE_ENV}=${forced} is not a positive number: set it to e.g. 3, or unset it.`);
    return value;
  }
  const cores = Math.max(1, os.availableParallelism());
  const ci = env.CI !== undefined && env.CI !== '' && env.CI !== 'false' && env.CI !== '0';
  return Math.min(MAX_FACTOR, (1 + Math.max(0, load) / cores) * (ci ? 1.5 : 1));
}

/** `ms` (what the wait needs on a quiet machine) times the load factor now, rounded to a whole millisecond. */
export function scaled(ms: number): number {
  return Math.round(ms * loadFactor());
}

/**
 * Polls until `check` holds or the load-scaled `budgetMs` has passed since the call; returns whether it held. The
 * deadline is recomputed at each poll, so load that rises during the wait extends it.
 */
export async function waitUntil(
  check: () => boolean | Promise<boolean>,
  budgetMs: number,
  stepMs = 100,
): Promise<boolean> {
  const start = Date.now();
  for (;;) {
    if (await check()) return true;
    if (Date.now() - start > scaled(budgetMs)) return false;
    await new Promise((resolve) => setTimeout(resolve, stepMs));
  }
}

/**
 * Resolves with `promise`, or rejects with "`what` never happened" once the load-scaled `budgetMs` has passed: for a
 * wait on an event rather than a polled condition.
 */
export function within<T>(promise: Promise<T>, budgetMs: number, what: string): Promise<T> {
  const ms = scaled(budgetMs);
  let timer: NodeJS.Timeout | undefined;
  const limit = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} never happened within ${ms} ms`)), ms);
    timer.unref();
  });
  return Promise.race([promise, limit]).finally(() => clearTimeout(timer));
}
