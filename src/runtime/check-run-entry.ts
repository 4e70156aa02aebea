/**
 * The check of a run's record (`RunIndexEntrySchema`: a line of `index.jsonl`, a `run.json`), written out by hand. A
 * fresh process reads thousands of them before its first attempt (the whole index; `runs` reads every run.json), and
 * zod's check of each, in code V8 has not optimized yet, cost a `start` ~50 ms at 5,000 runs. It accepts exactly what
 * the schema accepts and gives what it gives: the schema's keys in its order, defaults filled, unknown keys dropped,
 * the inline script's own keys kept. `tests/contract/check-run-entry.contract.test.ts` holds it to the schema on
 * generated values; a change to the schema must be mirrored here (that test fails until it is). Where a record is
 * refused, zod says what is wrong with it (`parseRunEntry`).
 */
import { RunIndexEntrySchema, type RunIndexEntry } from '../protocol/run-index.js';
import { ENGINE_ID_PATTERN } from '../protocol/versions.js';

type Fields = Record<string, unknown>;

const RUN_ID = /^\d{8}T\d{6}-[a-z]+-[0-9a-f]{8}$/;
const HANDLE = /^[0-9a-f]{8}$/;
const TRANSLATE_MODES: ReadonlySet<unknown> = new Set([0, 1, 2, 3]);
const MODEL_MODES: ReadonlySet<unknown> = new Set(['scripted', 'replay', 'record', 'live']);
/** What a field check returns for a value the schema refuses. */
const INVALID = Symbol('invalid');

/** What `z.object` accepts as its input. */
const isRecord = (value: unknown): value is Fields => typeof value === 'object' && value !== null && !Array.isArray(value);
const isString = (value: unknown): value is string => typeof value === 'string';
const isStringOrNull = (value: unknown): value is string | null => value === null || typeof value === 'string';
/** `TimestampSchema`: a string of 10 characters or more. */
const isTimestamp = (value: unknown): value is string => typeof value === 'string' && value.length >= 10;

/** `script`: a path, an inline script `{ version: 1, turns: [...] }` with its other keys, or null. */
function checkScript(value: unknown): RunIndexEntry['script'] | typeof INVALID {
  if (value === null || typeof value === 'string') return value;
  if (!isRecord(value) || value.version !== 1 || !Array.isArray(value.turns)) return INVALID;
  return { ...value, version: 1, turns: [...(value.turns as unknown[])] };
}

/** A nullable field with a null default: absent (undefined) is null. */
function orNull<T>(value: unknown, check: (v: unknown) => v is T): T | null | typeof INVALID {
  if (value === undefined || value === null) return null;
  return check(value) ? value : INVALID;
}

const isStringArray = (value: unknown): value is string[] => Array.isArray(value) && value.every(isString);

/** The run record `value` as `RunIndexEntrySchema` parses it, or undefined where the schema refuses it. */
export function checkRunEntry(value: unknown): RunIndexEntry | undefined {
  if (!isRecord(value)) return undefined;
  const { run_id, handle, engine, run_dir, created_at, updated_at, attempts, session_id, translate_mode, model_mode, last_completion } = value;
  if (!isString(run_id) || !RUN_ID.test(run_id) || !isString(handle) || !HANDLE.test(handle) || !(isString(engine) && ENGINE_ID_PATTERN.test(engine)) || !isString(run_dir)) return undefined;
  if (!isTimestamp(created_at) || !isTimestamp(updated_at) || !Number.isSafeInteger(attempts) || (attempts as number) < 0) return undefined;
  if (!isStringOrNull(session_id) || !TRANSLATE_MODES.has(translate_mode) || !MODEL_MODES.has(model_mode)) return undefined;
  const script = checkScript(value.script);
  if (script === INVALID || !isStringOrNull(last_completion)) return undefined;
  const startArgs = orNull(value.start_args, isStringArray);
  const prompt = orNull(value.prompt, isString);
  const label = orNull(value.label, isString);
  if (startArgs === INVALID || prompt === INVALID || label === INVALID) return undefined;
  return {
    run_id,
    handle,
    engine: engine as RunIndexEntry['engine'],
    run_dir,
    created_at,
    updated_at,
    attempts: attempts as number,
    session_id,
    translate_mode: translate_mode as RunIndexEntry['translate_mode'],
    model_mode: model_mode as RunIndexEntry['model_mode'],
    script,
    last_completion,
    start_args: startArgs === null ? null : [...startArgs],
    prompt,
    label,
  };
}

/** {@link checkRunEntry}, or the schema's own error (what is wrong, said by zod) for a value it refuses. */
export function parseRunEntry(value: unknown): RunIndexEntry {
  return checkRunEntry(value) ?? RunIndexEntrySchema.parse(value);
}
