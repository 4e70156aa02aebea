/**
 * Gates (issue 45 item 5): a case × engine × arm's pass rate held against a bound, against its interval's lower bound
 * when a confidence is given; an arm's lift over the baseline held against a bound likewise. Each returns a verdict
 * whose message names the case, the engine, the arm and the bound, for matchers, the plugin's thresholds and the CLI.
 */
import { AgentHarnessError } from '../errors/index.js';
import { newcombeInterval } from './lift.js';
import { checkConfidence, wilsonInterval } from './stats.js';
import type { TrialStatistics } from './summarize.js';

/** A pass-rate gate: the rate (or, with `confidence`, its interval's lower bound) must be at least `atLeast`. */
export interface PassRateGate {
  atLeast: number;
  /** Hold the bound against the lower end of the Wilson interval at this confidence (0.95), not the point rate. */
  confidence?: number;
}

/** A lift gate: the arm's lift over the baseline (or, with `confidence`, its interval's lower bound) >= `atLeast`. */
export interface LiftGate {
  /** Default 0: the skill must not hurt; with a confidence, it must help significantly. */
  atLeast?: number;
  confidence?: number;
}

/** A gate's verdict. */
export interface GateVerdict {
  pass: boolean;
  message: string;
}

function checkBound(value: unknown, option: string, min: number): number {
  if (typeof value !== 'number' || !(value >= min && value <= 1))
    throw new AgentHarnessError(
      'CONFIG_INVALID',
      `${option} = ${JSON.stringify(value)} is invalid: it is a rate between ${min} and 1.`,
      { details: { field: option } },
    );
  return value;
}

const pct = (x: number): string => `${(x * 100).toFixed(1)}%`;
const where = (s: TrialStatistics): string => `case "${s.case}" on ${s.engine} (arm ${s.arm})`;

/** Holds one row's pass rate against a gate. */
export function checkPassRate(stats: TrialStatistics, gate: PassRateGate): GateVerdict {
  const atLeast = checkBound(gate.atLeast, 'atLeast', 0);
  if (gate.confidence !== undefined) checkConfidence(gate.confidence);
  if (stats.n === 0)
    return {
      pass: false,
      message: `${where(stats)}: no counted trial (${stats.infra_failed} infrastructure, ${stats.engine_failed} engine, ${stats.judge_errors} judge failures), so its pass rate cannot be held against ${pct(atLeast)}`,
    };
  const rate = stats.passed / stats.n;
  const interval = gate.confidence === undefined ? null : wilsonInterval(stats.passed, stats.n, gate.confidence);
  const value = interval ? interval.low : rate;
  const pass = value >= atLeast;
  const measured = interval
    ? `the lower bound of its ${pct(gate.confidence!)} Wilson interval is ${pct(interval.low)} (rate ${pct(rate)}, ${stats.passed}/${stats.n}, interval ${pct(interval.low)}–${pct(interval.high)})`
    : `its pass rate is ${pct(rate)} (${stats.passed}/${stats.n})`;
  return {
    pass,
    message: `${where(stats)}: ${measured}, ${pass ? 'at least' : 'below'} the bound ${pct(atLeast)}${pass ? '' : stats.n < 20 && interval ? `; with n = ${stats.n} the interval is wide: run more trials` : ''}`,
  };
}

/** Holds one row's lift over the baseline against a gate. */
export function checkLift(stats: TrialStatistics, baseline: TrialStatistics | undefined, gate: LiftGate): GateVerdict {
  const atLeast = checkBound(gate.atLeast ?? 0, 'atLeast', -1);
  if (gate.confidence !== undefined) checkConfidence(gate.confidence);
  if (!baseline)
    return {
      pass: false,
      message: `${where(stats)}: no baseline arm ran, so there is no lift to hold against ${pct(atLeast)}; add arms: ['with-skill', 'baseline']`,
    };
  const lift = newcombeInterval(
    { passes: stats.passed, n: stats.n },
    { passes: baseline.passed, n: baseline.n },
    gate.confidence ?? 0.95,
  );
  const value = gate.confidence === undefined ? lift.diff : lift.low;
  const pass = value >= atLeast;
  return {
    pass,
    message: `${where(stats)}: lift over baseline ${pct(lift.diff)} (${stats.passed}/${stats.n} vs ${baseline.passed}/${baseline.n}, Newcombe interval ${pct(lift.low)}–${pct(lift.high)})${gate.confidence === undefined ? '' : `, lower bound ${pct(lift.low)}`}, ${pass ? 'at least' : 'below'} the bound ${pct(atLeast)}`,
  };
}
