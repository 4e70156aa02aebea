/**
 * The hand-written check of run records (src/runtime/check-run-entry.ts) is held to `RunIndexEntrySchema`, which it
 * stands in for on the index's and `runs`' read paths: on generated records — valid fields, wrong-typed ones, missing
 * and undefined keys, extra keys, NaN, infinities, unsafe integers, -0, arrays where objects belong, inline scripts
 * with keys of their own — it accepts exactly what the schema accepts and gives the same value, in the same key order.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { RunIndexEntrySchema } from '../../src/protocol/index.js';
import { engineIds } from '../../src/engines/registry.js';
import { checkRunEntry } from '../../src/runtime/check-run-entry.js';
import { exact } from '../helpers/exact.js';

fc.configureGlobal(process.env.FC_SEED === 'random' ? {} : { seed: Number(process.env.FC_SEED ?? 20261124) });

const odd = fc.oneof(
  fc.anything(),
  fc.constantFrom<unknown>(undefined, null, Number.NaN, Infinity, -Infinity, -0, 2 ** 60, 1.5, -1, 0, 3, 4, '', [], {}, ['a'], 'codex', 'cursor', 'scripted', 'mock', '2026-01-01', '2026-01-0', '0123abcd', '0123ABCD', '20260101T000000-codex-0123abcd', true),
);
/** A field: mostly valid, sometimes anything (one time in `odds`). */
const field = <T,>(valid: fc.Arbitrary<T>, odds = 5): fc.Arbitrary<unknown> => fc.oneof({ weight: odds - 1, arbitrary: valid }, { weight: 1, arbitrary: odd });
const hex8 = fc.stringMatching(/^[0-9a-f]{8}$/);
const nullableString = fc.option(fc.string(), { nil: null });
const script = fc.oneof(
  fc.constant(null),
  fc.string(),
  fc.record({ version: field(fc.constant(1)), turns: field(fc.array(fc.anything(), { maxLength: 3 })), extra: fc.anything() }, { requiredKeys: ['version'] }),
);
const fields = (odds: number) => ({
  run_id: field(fc.stringMatching(/^\d{8}T\d{6}-[a-z]+-[0-9a-f]{8}$/), odds),
  handle: field(hex8, odds),
  engine: field(fc.constantFrom(...engineIds(), 'sixth'), odds),
  run_dir: field(fc.string(), odds),
  created_at: field(fc.string({ minLength: 10, maxLength: 30 }), odds),
  updated_at: field(fc.string({ minLength: 10, maxLength: 30 }), odds),
  attempts: field(fc.nat(), odds),
  session_id: field(nullableString, odds),
  translate_mode: field(fc.constantFrom(0, 1, 2, 3), odds),
  model_mode: field(fc.constantFrom('scripted', 'replay', 'record', 'live'), odds),
  script: field(script, odds),
  last_completion: field(nullableString, odds),
  start_args: field(fc.option(fc.array(field(fc.string()), { maxLength: 3 }), { nil: null }), odds),
  prompt: field(nullableString, odds),
  label: field(nullableString, odds),
});
/** Records with any key missing, and whole records whose fields are rarely wrong (the accepting side). */
const record = fc.oneof(
  fc.record({ ...fields(5), unknown_key: fc.anything() }, { requiredKeys: [] }),
  fc.record({ ...fields(40), unknown_key: fc.anything() }, { requiredKeys: ['run_id', 'handle', 'engine', 'run_dir', 'created_at', 'updated_at', 'attempts', 'session_id', 'translate_mode', 'model_mode', 'script', 'last_completion'] }),
);

describe('checkRunEntry', () => {
  it('accepts what RunIndexEntrySchema accepts and gives what it gives', () => {
    let accepted = 0;
    fc.assert(fc.property(fc.oneof({ weight: 8, arbitrary: record }, { weight: 1, arbitrary: odd }), (value) => {
      const bySchema = RunIndexEntrySchema.safeParse(value);
      const byHand = checkRunEntry(value);
      expect(byHand !== undefined, exact(value)).toBe(bySchema.success);
      if (bySchema.success) {
        accepted += 1;
        expect(exact(byHand)).toBe(exact(bySchema.data));
        expect(byHand).toEqual(bySchema.data);
      }
    }), { numRuns: 4000 });
    // The generator must reach the accepting side often enough for the comparison to mean something.
    expect(accepted).toBeGreaterThan(100);
  });

  it('a real record passes unchanged, with its defaults filled', () => {
    const entry = {
      run_id: '20260101T000000-codex-0123abcd', handle: '0123abcd', engine: 'codex', run_dir: '/runs/x', created_at: '2026-01-01T00:00:00.000Z',
      updated_at: '2026-01-01T00:00:00.000Z', attempts: 2, session_id: 's', translate_mode: 0, model_mode: 'scripted',
      script: { version: 1, turns: [{ assistant: 'hi' }], note: 'kept' }, last_completion: 'completed',
    };
    expect(checkRunEntry(entry)).toEqual({ ...entry, start_args: null, prompt: null, label: null });
    expect(checkRunEntry({ ...entry, attempts: -1 })).toBeUndefined();
  });
});
