/**
 * The one reader of numeric settings, from the environment (`AGENT_HARNESS_MAX_SCRIPT_BYTES=…`) or from options
 * (`timeoutMs`). A value that is set but not a whole number in range is CONFIG_INVALID naming the setting and the
 * value, never silently replaced by the default: a typo in a limit would otherwise go unnoticed.
 */
import { AgentHarnessError } from '../errors/index.js';

/** What an integer setting accepts and where its value came from. */
export interface IntegerSetting {
  /** Name shown in the message: the env variable or the option (`timeoutMs`). */
  name: string;
  /** The value: a string from the environment (blank counts as unset), a number from options, or undefined. */
  value: string | number | undefined;
  /** Value when unset. */
  fallback: number;
  /** Smallest accepted value (default 0). */
  min?: number;
  /** Largest accepted value (default Number.MAX_SAFE_INTEGER). */
  max?: number;
  /** What the number counts, for the message ("bytes", "ms"). */
  unit?: string;
}

/** The setting's value: `fallback` when unset, else the whole number given; CONFIG_INVALID otherwise. */
export function readIntegerSetting(setting: IntegerSetting): number {
  const { name, value, fallback, min = 0, max = Number.MAX_SAFE_INTEGER } = setting;
  const text = typeof value === 'string' ? value.trim() : value;
  if (text === undefined || text === '') return fallback;
  const parsed = typeof text === 'number' ? text : /^[+]?\d+$/.test(text) ? Number(text) : Number.NaN;
  if (Number.isSafeInteger(parsed) && parsed >= min && parsed <= max) return parsed;
  const range = max === Number.MAX_SAFE_INTEGER ? `${min} or more` : `from ${min} to ${max}`;
  throw new AgentHarnessError(
    'CONFIG_INVALID',
    `${name} must be a whole number${setting.unit ? ` of ${setting.unit}` : ''}, ${range}, not ${JSON.stringify(value)}.`,
    { details: { setting: name, value: String(value) } },
  );
}

/** Reads the integer env variable `name` of `env` (see {@link readIntegerSetting}). */
export function readIntegerEnv(
  env: NodeJS.ProcessEnv,
  name: string,
  rules: Omit<IntegerSetting, 'name' | 'value'>,
): number {
  return readIntegerSetting({ ...rules, name, value: env[name] });
}
