/**
 * A text form of a value for tests that hold a hand-written check to the zod schema it stands in for: it tells apart
 * what `toEqual` does not (key order, undefined keys, -0, NaN, infinities).
 */
export function exact(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) => {
    if (v === undefined) return '<undefined>';
    if (typeof v === 'number' && (!Number.isFinite(v) || Object.is(v, -0)))
      return `<number ${Object.is(v, -0) ? '-0' : String(v)}>`;
    return v;
  });
}
