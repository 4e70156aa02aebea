/**
 * The suite's time budgets grow with the load (tests/helpers/load-scaled.ts): 1 idle, more per unit of load per core,
 * more under CI, capped; a variable overrides; a bad value is refused naming it.
 */
import os from 'node:os';
import { describe, expect, it } from 'vitest';
import { loadFactor, TIME_SCALE_ENV, waitUntil, within } from '../helpers/load-scaled.js';

const cores = Math.max(1, os.availableParallelism());

describe('load-scaled budgets', () => {
  it('grows with the load per core and under CI, up to a cap', () => {
    expect(loadFactor({}, 0)).toBe(1);
    expect(loadFactor({}, cores)).toBe(2);
    expect(loadFactor({}, 5 * cores)).toBe(6);
    expect(loadFactor({ CI: 'true' }, cores)).toBe(3);
    expect(loadFactor({ CI: 'false' }, cores)).toBe(2);
    expect(loadFactor({}, 1000 * cores)).toBe(10);
  });

  it(`${TIME_SCALE_ENV} sets the factor; a bad value is refused`, () => {
    expect(loadFactor({ [TIME_SCALE_ENV]: '4', CI: 'true' }, 1000)).toBe(4);
    expect(() => loadFactor({ [TIME_SCALE_ENV]: 'fast' }, 0)).toThrow(
      `${TIME_SCALE_ENV}=fast is not a positive number`,
    );
  });

  it('waitUntil returns once the condition holds, and false when it never does', async () => {
    let polls = 0;
    expect(await waitUntil(() => ++polls === 3, 60_000, 1)).toBe(true);
    expect(polls).toBe(3);
    expect(await waitUntil(() => false, 0, 1)).toBe(false);
  });

  it('within passes a settled promise through and names what never happened', async () => {
    expect(await within(Promise.resolve(7), 60_000, 'seven')).toBe(7);
    await expect(within(new Promise(() => undefined), 0, 'the event')).rejects.toThrow(/the event never happened/);
  });
});
