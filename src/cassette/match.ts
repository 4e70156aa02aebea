/**
 * The replay matching ladder. A request (normalized) is served by the first unused recorded interaction that is:
 * 1. `exact`: the same hash (method, normalized path and body), or, at the same place, a recorded body that normalized
 *    again is the request's (a cassette recorded before a normalization rule was added);
 * 2. `divergent`: the same wire API, kind (model call or which side request), path and place in the conversation, and
 *    the same last user text, differing elsewhere: served, with the field-level difference as a diagnostic;
 * else it is a `miss`, reported with its difference from the nearest recorded interaction.
 */
import { normalizeBody } from './normalize.js';
import type { CassetteInteraction } from './schema.js';

/** A request to match, normalized. */
export interface MatchRequest {
  wire: CassetteInteraction['wire'];
  sideKind: string | null;
  position: number;
  method: string;
  /** Normalized path. */
  path: string;
  normalized: unknown;
  hash: string;
  /** The last user text, normalized (the prompt the engine was given): a divergent match must keep it. */
  userText: string | null;
}

/** One differing field: its JSON path, the recorded value and the requested one (abridged). */
export interface FieldDifference {
  path: string;
  recorded: string;
  requested: string;
}

/** What the ladder found. */
export type MatchResult =
  | { kind: 'exact'; index: number }
  | { kind: 'divergent'; index: number; differences: FieldDifference[] }
  | { kind: 'miss'; nearest: number | null; differences: FieldDifference[] };

/** At most this many differences are listed. */
const MAX_DIFFERENCES = 8;
/** Values in a difference are cut to this many characters. */
const MAX_VALUE_CHARS = 160;

function textOf(value: unknown): string {
  return value === undefined ? '(absent)' : typeof value === 'string' ? value : JSON.stringify(value);
}

/** `text` cut to {@link MAX_VALUE_CHARS} around `at` (where it differs from the other value). */
function abridge(text: string, at: number): string {
  if (text.length <= MAX_VALUE_CHARS) return text;
  const start = Math.max(0, Math.min(at - MAX_VALUE_CHARS / 4, text.length - MAX_VALUE_CHARS));
  const head = start > 0 ? `…(${start} chars)` : '';
  const end = start + MAX_VALUE_CHARS;
  const tail = end < text.length ? `…(${text.length - end} more chars)` : '';
  return `${head}${text.slice(start, end)}${tail}`;
}

/** The index of the first character where `a` and `b` differ. */
function firstDifference(a: string, b: string): number {
  let i = 0;
  while (i < a.length && i < b.length && a[i] === b[i]) i += 1;
  return i;
}

/** The field-level differences between two normalized values (depth first, at most {@link MAX_DIFFERENCES}). */
export function diffValues(recorded: unknown, requested: unknown, limit = MAX_DIFFERENCES): FieldDifference[] {
  const out: FieldDifference[] = [];
  const walk = (a: unknown, b: unknown, at: string): void => {
    if (out.length >= limit) return;
    if (a === b) return;
    const bothObjects = a !== null && b !== null && typeof a === 'object' && typeof b === 'object';
    if (bothObjects && Array.isArray(a) === Array.isArray(b)) {
      if (Array.isArray(a) && Array.isArray(b)) {
        const n = Math.max(a.length, b.length);
        for (let i = 0; i < n; i += 1) walk(a[i], b[i], `${at}[${i}]`);
        return;
      }
      const ra = a as Record<string, unknown>;
      const rb = b as Record<string, unknown>;
      for (const key of [...new Set([...Object.keys(ra), ...Object.keys(rb)])].sort())
        walk(ra[key], rb[key], at ? `${at}.${key}` : key);
      return;
    }
    if (JSON.stringify(a) === JSON.stringify(b)) return;
    const [ta, tb] = [textOf(a), textOf(b)];
    const from = firstDifference(ta, tb);
    out.push({ path: at || '(body)', recorded: abridge(ta, from), requested: abridge(tb, from) });
  };
  walk(recorded, requested, '');
  return out;
}

/** How many leaf differences two values have (bounded), to find the nearest recorded request. */
function distance(a: unknown, b: unknown): number {
  return diffValues(a, b, 1000).length;
}

/** Finds the recorded interaction that serves `request` among those not `used`. */
export function matchRequest(
  request: MatchRequest,
  interactions: readonly CassetteInteraction[],
  used: ReadonlySet<number>,
  userTextOf: (interaction: CassetteInteraction) => string | null,
): MatchResult {
  const free = interactions
    .map((interaction, index) => ({ interaction, index }))
    .filter(({ index }) => !used.has(index));
  const exact = free.find(({ interaction }) => interaction.request.hash === request.hash);
  if (exact) return { kind: 'exact', index: exact.index };
  const samePlace = free.filter(
    ({ interaction }) =>
      interaction.wire === request.wire &&
      interaction.side_kind === request.sideKind &&
      interaction.request.method === request.method &&
      interaction.request.path === request.path &&
      interaction.position === request.position,
  );
  // A cassette recorded before a normalization rule was added: its request, normalized again, is the same.
  const requested = JSON.stringify(request.normalized);
  const renormalized = samePlace.find(
    ({ interaction }) => JSON.stringify(normalizeBody(interaction.request.normalized)) === requested,
  );
  if (renormalized) return { kind: 'exact', index: renormalized.index };
  const divergent = samePlace.find(({ interaction }) => userTextOf(interaction) === request.userText);
  if (divergent)
    return {
      kind: 'divergent',
      index: divergent.index,
      differences: diffValues(divergent.interaction.request.normalized, request.normalized),
    };
  // The nearest: a request at the same place first, else the same wire API, else any; the fewest differences.
  const pool = samePlace.length
    ? samePlace
    : free.filter(({ interaction }) => interaction.wire === request.wire).length
      ? free.filter(({ interaction }) => interaction.wire === request.wire)
      : interactions.map((interaction, index) => ({ interaction, index }));
  let nearest: { index: number; score: number } | null = null;
  for (const { interaction, index } of pool) {
    const score =
      distance(interaction.request.normalized, request.normalized) + Math.abs(interaction.position - request.position);
    if (!nearest || score < nearest.score) nearest = { index, score };
  }
  return {
    kind: 'miss',
    nearest: nearest?.index ?? null,
    differences: nearest
      ? diffValues(interactions[nearest.index]?.request.normalized, request.normalized)
      : [{ path: '(cassette)', recorded: '(no interactions)', requested: `${request.method} ${request.path}` }],
  };
}

/** One line per difference: `  path: recorded → requested`. */
export function formatDifferences(differences: readonly FieldDifference[]): string {
  return differences
    .map((d) => `  ${d.path}: recorded ${JSON.stringify(d.recorded)}, requested ${JSON.stringify(d.requested)}`)
    .join('\n');
}
