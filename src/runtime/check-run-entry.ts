/**
 * The check of a run's record (a line of `index.jsonl`, a `run.json`) against `RunIndexEntrySchema`
 * (`protocol/run-index.ts`), written by hand: every start reads the index log and the run's record, and loading zod
 * and building the schema cost a fresh process more than the whole check (issue 44). It gives what the schema's
 * parse gives (the schema's keys in its order, defaults filled, unknown keys dropped, the script's own keys kept) and
 * refuses what the schema refuses; `tests/contract/run-entry-check.contract.test.ts` holds it to the schema with
 * generated records.
 */
import type { RunIndexEntry } from '../protocol/run-index.js';
import { ENGINE_ID_PATTERN } from '../protocol/versions.js';

type Check = (value: unknown) => boolean;

const isString: Check = (value) => typeof value === 'string';
const nullOr =
  (check: Check): Check =>
  (value) =>
    value === null || check(value);
const matching =
  (pattern: RegExp): Check =>
  (value) =>
    typeof value === 'string' && pattern.test(value);
/** `TimestampSchema`: a string of at least 10 UTF-16 code units. */
const isTimestamp: Check = (value) => typeof value === 'string' && value.length >= 10;
/** A plain object, as zod's `z.object` takes it (not null, not an array). */
const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);
/** The inline model script: `{"version": 1, "turns": [...]}`, its other keys kept (`passthrough`). */
const isInlineScript: Check = (value) => isRecord(value) && value.version === 1 && Array.isArray(value.turns);

/** One field of the record: its check, what it must be (for the error), and its default when absent. */
interface Field {
  readonly key: keyof RunIndexEntry;
  readonly check: Check;
  readonly expected: string;
  readonly absent?: null;
}

/** `RunIndexEntrySchema`'s fields, in its order. */
const FIELDS: readonly Field[] = [
  {
    key: 'run_id',
    check: matching(/^\d{8}T\d{6}-[a-z]+-[0-9a-f]{8}$/),
    expected: 'a run id (<yyyymmdd>T<hhmmss>-<engine>-<8 hex digits>)',
  },
  { key: 'handle', check: matching(/^[0-9a-f]{8}$/), expected: '8 lower-case hex digits' },
  { key: 'engine', check: matching(ENGINE_ID_PATTERN), expected: 'an engine id (1-32 lower-case letters)' },
  { key: 'run_dir', check: isString, expected: 'a string' },
  { key: 'created_at', check: isTimestamp, expected: 'an ISO-8601 timestamp' },
  { key: 'updated_at', check: isTimestamp, expected: 'an ISO-8601 timestamp' },
  {
    key: 'attempts',
    // zod's `.int()` is a safe integer; -0 passes `.nonnegative()`.
    check: (value) => Number.isSafeInteger(value) && (value as number) >= 0,
    expected: 'a non-negative integer',
  },
  { key: 'session_id', check: nullOr(isString), expected: 'a string or null' },
  {
    key: 'translate_mode',
    check: (value) => value === 0 || value === 1 || value === 2 || value === 3,
    expected: '0, 1, 2 or 3',
  },
  {
    key: 'model_mode',
    check: (value) => value === 'scripted' || value === 'replay' || value === 'record' || value === 'live',
    expected: '"scripted", "replay", "record" or "live"',
  },
  {
    key: 'script',
    check: nullOr((value) => isString(value) || isInlineScript(value)),
    expected: 'a path, an inline script {"version": 1, "turns": [...]} or null',
  },
  { key: 'last_completion', check: nullOr(isString), expected: 'a string or null' },
  {
    key: 'start_args',
    check: nullOr((value) => Array.isArray(value) && value.every(isString)),
    expected: 'an array of strings or null',
    absent: null,
  },
  { key: 'prompt', check: nullOr(isString), expected: 'a string or null', absent: null },
  { key: 'label', check: nullOr(isString), expected: 'a string or null', absent: null },
];

/** The field's value as the schema gives it: arrays copied, the inline script a copy with its turns copied. */
function copied(value: unknown): unknown {
  if (Array.isArray(value)) return [...value];
  if (isRecord(value)) return { ...value, turns: [...(value.turns as unknown[])] };
  return value;
}

/** The record as the schema parses it, or the list of what is wrong with it. */
function check(value: unknown): { entry: RunIndexEntry } | { problems: string[] } {
  if (!isRecord(value)) return { problems: [`expected an object, got ${describe(value)}`] };
  const entry: Record<string, unknown> = {};
  const problems: string[] = [];
  for (const field of FIELDS) {
    const given = value[field.key];
    if (given === undefined && field.absent !== undefined) entry[field.key] = field.absent;
    else if (field.check(given)) entry[field.key] = copied(given);
    else problems.push(`${field.key}: expected ${field.expected}, got ${describe(given)}`);
  }
  return problems.length === 0 ? { entry: entry as unknown as RunIndexEntry } : { problems };
}

/** A short rendering of a refused value for the error message. */
function describe(value: unknown): string {
  if (value === undefined) return 'nothing';
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
}

/** The run record `value` as `RunIndexEntrySchema` parses it, or undefined where the schema refuses it. */
export function checkRunEntry(value: unknown): RunIndexEntry | undefined {
  const result = check(value);
  return 'entry' in result ? result.entry : undefined;
}

/** The run record `value` as the schema parses it; an Error saying which fields are wrong and how, otherwise. */
export function parseRunEntry(value: unknown): RunIndexEntry {
  const result = check(value);
  if ('entry' in result) return result.entry;
  throw new Error(result.problems.join('; '));
}
