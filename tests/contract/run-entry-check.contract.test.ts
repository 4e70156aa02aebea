/**
 * The hand-written check of a run record (`src/runtime/check-run-entry.ts`, which keeps zod off every start) is the
 * schema's check: for generated records, valid and broken field by field, it accepts what `RunIndexEntrySchema`
 * accepts, gives what the schema's parse gives (defaults filled, unknown keys dropped, the inline script's own keys
 * kept), and refuses what the schema refuses, naming the field.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { RunIndexEntrySchema } from '../../src/protocol/run-index.js';
import { checkRunEntry, parseRunEntry } from '../../src/runtime/check-run-entry.js';

const hex8 = fc.stringMatching(/^[0-9a-f]{8}$/);
const valid = {
  run_id: fc.oneof(
    fc.constant('20261129T102637-codex-877cd6ee'),
    fc.tuple(fc.stringMatching(/^\d{8}T\d{6}$/), fc.stringMatching(/^[a-z]{1,8}$/), hex8).map((p) => p.join('-')),
  ),
  handle: hex8,
  engine: fc.stringMatching(/^[a-z]{1,32}$/),
  run_dir: fc.string(),
  created_at: fc.oneof(fc.constant('2026-11-29T10:26:37.000Z'), fc.string({ minLength: 10 })),
  updated_at: fc.oneof(fc.constant('2026-11-29T10:26:37.000Z'), fc.string({ minLength: 10 })),
  attempts: fc.nat(),
  session_id: fc.option(fc.string()),
  translate_mode: fc.constantFrom(0, 1, 2, 3),
  model_mode: fc.constantFrom('scripted', 'replay', 'record', 'live'),
  script: fc.option(
    fc.oneof(
      fc.string(),
      fc.record(
        { version: fc.constant(1), turns: fc.array(fc.jsonValue(), { maxLength: 3 }), note: fc.string() },
        { requiredKeys: ['version', 'turns'] },
      ),
    ),
  ),
  last_completion: fc.option(fc.string()),
  start_args: fc.option(fc.array(fc.string(), { maxLength: 3 })),
  prompt: fc.option(fc.string()),
  label: fc.option(fc.string()),
};
type Key = keyof typeof valid;
const KEYS = Object.keys(valid) as Key[];

/** Values a broken field may hold instead: wrong types, near misses of each field's form, nothing at all. */
const wrong = fc.oneof(
  fc.jsonValue({ maxDepth: 2 }),
  fc.constantFrom<unknown>(
    undefined,
    null,
    -1,
    -0,
    1.5,
    2 ** 53,
    4,
    '',
    'short',
    'CODEX',
    'abcdef0',
    'ABCDEF01',
    '20261129T102637-Codex-877cd6ee',
    'replayed',
    [1],
    { version: 2, turns: [] },
    { version: 1 },
    { version: 1, turns: {} },
  ),
);

/** A record: every field valid, then some fields replaced by wrong values or removed, plus unknown keys. */
const records = fc
  .tuple(
    fc.record(valid),
    fc.dictionary(fc.constantFrom(...KEYS), wrong, { maxKeys: 3 }),
    fc.dictionary(fc.string({ minLength: 1, maxLength: 6 }), fc.jsonValue({ maxDepth: 1 }), { maxKeys: 2 }),
  )
  .map(([record, broken, extra]) => {
    const out: Record<string, unknown> = { ...extra, ...record, ...broken };
    for (const [key, value] of Object.entries(broken)) if (value === undefined) delete out[key];
    return out;
  });

describe('the run record check (no zod) is the schema', () => {
  it('accepts, gives and refuses what RunIndexEntrySchema does, for generated records', () => {
    let accepted = 0;
    let refused = 0;
    fc.assert(
      fc.property(records, (record) => {
        const schema = RunIndexEntrySchema.safeParse(record);
        const mine = checkRunEntry(record);
        if (schema.success) {
          accepted += 1;
          expect(mine).toStrictEqual(schema.data);
        } else {
          refused += 1;
          expect(mine).toBeUndefined();
          // The error names a field the schema names.
          const fields = new Set(schema.error.issues.map((issue) => String(issue.path[0])));
          const message = (() => {
            try {
              parseRunEntry(record);
              return '';
            } catch (error) {
              return (error as Error).message;
            }
          })();
          expect([...fields].some((field) => message.includes(`${field}: expected`))).toBe(true);
        }
      }),
      { numRuns: 2000 },
    );
    // Both sides were exercised: the generator is not all-valid nor all-broken.
    expect(accepted).toBeGreaterThan(100);
    expect(refused).toBeGreaterThan(100);
  });

  it('refuses what is not an object, as the schema does', () => {
    for (const value of [null, undefined, 'x', 3, [], [{}]]) {
      expect(RunIndexEntrySchema.safeParse(value).success).toBe(false);
      expect(checkRunEntry(value)).toBeUndefined();
      expect(() => parseRunEntry(value)).toThrow(/expected an object/);
    }
  });
});
