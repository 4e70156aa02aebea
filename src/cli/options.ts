/**
 * Parsing of the options shared by several commands, with errors that name the bad value.
 */
import path from 'node:path';
import type { ForkTarget } from '../cassette/mode.js';
import { AgentHarnessError } from '../errors/index.js';
import { parseExposeEntry } from '../runtime/isolation/expose-entry.js';
import type { IsolationMode, ModelMode, TranslateMode } from '../protocol/index.js';

/** Parses `--translate` (0..3). */
export function parseTranslateMode(value: string): TranslateMode {
  if (!/^[0-3]$/.test(value)) {
    throw new AgentHarnessError('USAGE_ERROR', `--translate must be 0, 1, 2 or 3, not ${JSON.stringify(value)}.`);
  }
  return Number(value) as TranslateMode;
}

/**
 * Parses `--model`: `scripted`, `live`, or a cassette mode (`record`, `replay`, `auto`, with `--cassette FILE`; see
 * docs/cassettes.md).
 */
export function parseModelMode(value: string): ModelMode | 'auto' {
  if (value !== 'scripted' && value !== 'live' && value !== 'replay' && value !== 'record' && value !== 'auto') {
    throw new AgentHarnessError(
      'USAGE_ERROR',
      `--model must be "scripted", "live", "record", "replay" or "auto", not ${JSON.stringify(value)}.`,
    );
  }
  return value;
}

/** Parses `--pace` (0 = as fast as possible, 1 = the recorded pace, 2 = twice as slow). */
export function parsePace(value: string): number {
  const n = Number(value);
  if (value.trim() === '' || !Number.isFinite(n) || n < 0)
    throw new AgentHarnessError('USAGE_ERROR', `--pace must be a number of 0 or more, not ${JSON.stringify(value)}.`);
  return n;
}

/** Parses a count of model turns (`--fork-at`): a whole number, 0 or more. */
export function parseTurnCount(value: string): number {
  if (!/^\d+$/.test(value))
    throw new AgentHarnessError(
      'USAGE_ERROR',
      `--fork-at must be a whole number of model turns, not ${JSON.stringify(value)}.`,
    );
  return Number(value);
}

/** Parses `--fork-to scripted|live`. */
export function parseForkTarget(value: string): ForkTarget {
  if (value !== 'scripted' && value !== 'live')
    throw new AgentHarnessError('USAGE_ERROR', `--fork-to must be scripted or live, not ${JSON.stringify(value)}.`);
  return value;
}

/** Parses `--isolation auto|require|off`. */
export function parseIsolationMode(value: string): IsolationMode {
  if (value !== 'auto' && value !== 'require' && value !== 'off') {
    throw new AgentHarnessError(
      'USAGE_ERROR',
      `--isolation must be "auto", "require" or "off", not ${JSON.stringify(value)}.`,
    );
  }
  return value;
}

/**
 * Collects `--expose PATH[:ro]` (repeatable): PATH resolved against the working directory, `:ro` kept. Whether it
 * exists is checked when the attempt is prepared (CONFIG_INVALID).
 */
export function collectExpose(value: string, previous: string[] = []): string[] {
  const { path: raw, readOnly } = parseExposeEntry(value);
  if (raw === '')
    throw new AgentHarnessError('USAGE_ERROR', `--expose takes PATH or PATH:ro, not ${JSON.stringify(value)}.`);
  return [...previous, `${path.resolve(raw)}${readOnly ? ':ro' : ''}`];
}

/** The help text of `--expose`. */
export const EXPOSE_HELP =
  'let the agent see host PATH (read-write; PATH:ro read-only) inside its mount namespace (repeatable)';

/** Parses a positive integer option such as `--timeout-ms`. */
export function parsePositiveInt(name: string) {
  return (value: string): number => {
    const n = Number(value);
    if (!Number.isInteger(n) || n <= 0)
      throw new AgentHarnessError('USAGE_ERROR', `${name} must be a positive integer, not ${JSON.stringify(value)}.`);
    return n;
  };
}

/**
 * Parses `--trials` and `--concurrency`: a number when the value reads as one, else the text itself, so that the
 * trial options' check (src/evals/trial-options.ts) names the option and the value in its CONFIG_INVALID.
 */
export function parseTrialNumber(value: string): number | string {
  const n = Number(value);
  return value.trim() !== '' && Number.isFinite(n) ? n : value;
}

/** Parses `--port`: 0 (any free port, the one chosen is printed) to 65535, as `view` and `model serve` take it. */
export function parsePort(value: string): number {
  const n = Number(value);
  if (!/^\d+$/.test(value) || n > 65_535)
    throw new AgentHarnessError('USAGE_ERROR', `--port takes a port number (0-65535), not ${JSON.stringify(value)}.`);
  return n;
}

/**
 * Removes every `--translate N` / `--translate=N` from engine passthrough args (the flag is the harness's and
 * never reaches the engine, wherever it was written) and returns the last value seen.
 */
export function extractTranslateFlag(args: readonly string[]): {
  args: string[];
  translate: TranslateMode | undefined;
} {
  const out: string[] = [];
  let translate: TranslateMode | undefined;
  for (let i = 0; i < args.length; i += 1) {
    const arg = args[i] ?? '';
    if (arg === '--') {
      out.push(...args.slice(i));
      break;
    }
    if (arg === '--translate') {
      const value = args[i + 1];
      if (value === undefined) throw new AgentHarnessError('USAGE_ERROR', '--translate needs a value (0, 1, 2 or 3).');
      translate = parseTranslateMode(value);
      i += 1;
    } else if (arg.startsWith('--translate=')) {
      translate = parseTranslateMode(arg.slice('--translate='.length));
    } else {
      out.push(arg);
    }
  }
  return { args: out, translate };
}

/** A repeatable option's values, in order. */
export function collect(value: string, previous: string[] = []): string[] {
  return [...previous, value];
}

/** `--only-skills` given (repeatable, each comma-separated) as a list of names; undefined when not given. */
export function onlySkillsOf(given: readonly string[] | undefined): { onlySkills: string[] } | Record<string, never> {
  return given ? { onlySkills: given.flatMap((s) => s.split(',')).filter(Boolean) } : {};
}
