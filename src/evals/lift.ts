/**
 * Does the skill help: the lift of one arm's pass rate over another's, with Newcombe's hybrid score interval
 * (Newcombe 1998, method 10, built from the two Wilson intervals), and McNemar's exact test when the trials pair
 * (trial i of both arms ran the same seed). Pure functions over counts.
 */
import { type Interval, wilsonInterval } from './stats.js';

/** Passes out of n trials of one arm. */
export interface ArmCounts {
  readonly passes: number;
  readonly n: number;
}

/** The difference of two rates with its interval. */
export interface Lift extends Interval {
  /** rate(a) - rate(b), in [-1, 1]. */
  readonly diff: number;
}

/**
 * The difference rate(a) - rate(b) with Newcombe's hybrid score interval at `confidence`. Unlike the Wald interval of a
 * difference it stays inside [-1, 1] and behaves at rates of 0 or 1. Either arm with n = 0 gives [-1, 1].
 */
export function newcombeInterval(a: ArmCounts, b: ArmCounts, confidence = 0.95): Lift {
  if (a.n === 0 || b.n === 0) return { diff: 0, low: -1, high: 1 };
  const p1 = a.passes / a.n;
  const p2 = b.passes / b.n;
  const w1 = wilsonInterval(a.passes, a.n, confidence);
  const w2 = wilsonInterval(b.passes, b.n, confidence);
  const diff = p1 - p2;
  return {
    diff,
    low: Math.max(-1, diff - Math.sqrt((p1 - w1.low) ** 2 + (w2.high - p2) ** 2)),
    high: Math.min(1, diff + Math.sqrt((w1.high - p1) ** 2 + (p2 - w2.low) ** 2)),
  };
}

/** McNemar's exact test of paired trials: the discordant pairs and the two-sided p-value. */
export interface McNemar {
  /** Pairs where the first arm passed and the second failed. */
  readonly onlyA: number;
  /** Pairs where the second arm passed and the first failed. */
  readonly onlyB: number;
  /** Two-sided exact binomial p-value of onlyA against onlyB under p = 1/2 (1 with no discordant pair). */
  readonly p: number;
}

/** log C(n, k), by summing logs (n is a trial count: small). */
function logChoose(n: number, k: number): number {
  let s = 0;
  for (let i = 1; i <= k; i++) s += Math.log(n - k + i) - Math.log(i);
  return s;
}

/**
 * McNemar's exact test over pairs of outcomes (a[i], b[i]): only the discordant pairs carry evidence; p is
 * min(1, 2 · P(X <= min(onlyA, onlyB))) for X ~ Binomial(onlyA + onlyB, 1/2).
 */
export function mcnemarExact(pairs: ReadonlyArray<readonly [boolean, boolean]>): McNemar {
  let onlyA = 0;
  let onlyB = 0;
  for (const [a, b] of pairs) {
    if (a && !b) onlyA += 1;
    else if (b && !a) onlyB += 1;
  }
  const m = onlyA + onlyB;
  if (m === 0) return { onlyA, onlyB, p: 1 };
  let tail = 0;
  for (let i = 0; i <= Math.min(onlyA, onlyB); i++) tail += Math.exp(logChoose(m, i) - m * Math.LN2);
  return { onlyA, onlyB, p: Math.min(1, 2 * tail) };
}
