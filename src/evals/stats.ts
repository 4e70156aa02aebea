/**
 * The statistics of a set of pass/fail trials (issue 45): the pass rate's Wilson score interval, the unbiased pass@k
 * estimator of Chen et al. (2021) and its companion pass^k, and the flaky flag. Pure functions over counts.
 */
import { AgentHarnessError } from '../errors/index.js';

/** A two-sided interval on [0, 1]. */
export interface Interval {
  readonly low: number;
  readonly high: number;
}

/**
 * The standard normal quantile (inverse CDF) at `p` in (0, 1): Acklam's rational approximation, relative error below
 * 1.2e-9, enough for an interval's bound.
 */
export function normalQuantile(p: number): number {
  if (!(p > 0 && p < 1)) throw new RangeError(`normalQuantile needs 0 < p < 1, got ${p}`);
  const a = [
    -39.69683028665376, 220.9460984245205, -275.9285104469687, 138.357751867269, -30.66479806614716, 2.506628277459239,
  ];
  const b = [-54.47609879822406, 161.5858368580409, -155.6989798598866, 66.80131188771972, -13.28068155288572];
  const c = [
    -0.007784894002430293, -0.3223964580411365, -2.400758277161838, -2.549732539343734, 4.374664141464968,
    2.938163982698783,
  ];
  const d = [0.007784695709041462, 0.3224671290700398, 2.445134137142996, 3.754408661907416];
  const low = 0.02425;
  if (p < low) {
    const q = Math.sqrt(-2 * Math.log(p));
    return (
      (((((c[0]! * q + c[1]!) * q + c[2]!) * q + c[3]!) * q + c[4]!) * q + c[5]!) /
      ((((d[0]! * q + d[1]!) * q + d[2]!) * q + d[3]!) * q + 1)
    );
  }
  if (p > 1 - low) return -normalQuantile(1 - p);
  const q = p - 0.5;
  const r = q * q;
  return (
    ((((((a[0]! * r + a[1]!) * r + a[2]!) * r + a[3]!) * r + a[4]!) * r + a[5]!) * q) /
    (((((b[0]! * r + b[1]!) * r + b[2]!) * r + b[3]!) * r + b[4]!) * r + 1)
  );
}

/** The two-sided z of a confidence level (1.96 for 0.95). */
export function zOf(confidence: number): number {
  checkConfidence(confidence);
  return normalQuantile(1 - (1 - confidence) / 2);
}

/** CONFIG_INVALID unless 0 < confidence < 1. */
export function checkConfidence(confidence: number, option = 'confidence'): void {
  if (!(typeof confidence === 'number' && confidence > 0 && confidence < 1))
    throw new AgentHarnessError(
      'CONFIG_INVALID',
      `${option} = ${JSON.stringify(confidence)} is invalid: a confidence level is a number strictly between 0 and 1, such as 0.95.`,
      { details: { field: option } },
    );
}

/**
 * The Wilson score interval of `passes` out of `n` at `confidence` (default 0.95). Chosen over the normal (Wald)
 * interval because it stays inside [0, 1] and keeps its coverage at small n and at rates near 0 or 1, which is where
 * skill evals live. n = 0 gives [0, 1]: no evidence.
 */
export function wilsonInterval(passes: number, n: number, confidence = 0.95): Interval {
  checkCounts(passes, n);
  if (n === 0) return { low: 0, high: 1 };
  const z = zOf(confidence);
  const p = passes / n;
  const z2 = z * z;
  const centre = (p + z2 / (2 * n)) / (1 + z2 / n);
  const half = (z / (1 + z2 / n)) * Math.sqrt((p * (1 - p)) / n + z2 / (4 * n * n));
  // The exact bounds at 0 and n passes (rounding would leave 1e-17 off them).
  return {
    low: passes === 0 ? 0 : Math.max(0, centre - half),
    high: passes === n ? 1 : Math.min(1, centre + half),
  };
}

function checkCounts(passes: number, n: number): void {
  if (!Number.isInteger(n) || n < 0 || !Number.isInteger(passes) || passes < 0 || passes > n)
    throw new RangeError(`counts must be integers with 0 <= passes <= n, got passes=${passes}, n=${n}`);
}

/** CONFIG_INVALID unless k is an integer with 1 <= k <= n (`option` names where k came from). */
export function checkK(k: number, n: number, option = 'k'): void {
  if (!Number.isInteger(k) || k < 1)
    throw new AgentHarnessError(
      'CONFIG_INVALID',
      `${option} = ${JSON.stringify(k)} is invalid: k is a whole number of at least 1.`,
      { details: { field: option } },
    );
  if (k > n)
    throw new AgentHarnessError(
      'CONFIG_INVALID',
      `${option} = ${k} is larger than the number of trials (n = ${n}): pass@k needs k <= n. Lower ${option} or run more trials.`,
      { details: { field: option, k, n } },
    );
}

/**
 * Unbiased pass@k (Chen et al. 2021, "Evaluating Large Language Models Trained on Code"): the chance that at least one
 * of k trials drawn without replacement from the n run passes, 1 - C(n-c, k) / C(n, k), computed as the paper's
 * stable product 1 - Π_{i=n-c+1..n} (1 - k/i). CONFIG_INVALID when k > n.
 */
export function passAtK(n: number, passes: number, k: number): number {
  checkCounts(passes, n);
  checkK(k, n);
  if (n - passes < k) return 1;
  let fail = 1;
  for (let i = n - passes + 1; i <= n; i++) fail *= 1 - k / i;
  return 1 - fail;
}

/**
 * Unbiased pass^k (τ-bench's pass^k): the chance that all of k trials drawn without replacement from the n run pass,
 * C(c, k) / C(n, k) = Π_{i=0..k-1} (c-i)/(n-i): how reliably the case passes every time. CONFIG_INVALID when k > n.
 */
export function passHatK(n: number, passes: number, k: number): number {
  checkCounts(passes, n);
  checkK(k, n);
  let all = 1;
  for (let i = 0; i < k; i++) all *= Math.max(0, passes - i) / (n - i);
  return all;
}

/** Flaky: some trials passed and some failed (0 < passes < n). */
export function isFlaky(passes: number, n: number): boolean {
  return passes > 0 && passes < n;
}
