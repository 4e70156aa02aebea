/**
 * Which cassette mode an attempt runs in, decided before anything starts: `record` needs the user's key for the
 * engine's wire API, `replay` an existing valid cassette, and `auto` replays when the cassette exists, records when it
 * does not and a key is set, and otherwise fails: CI never reaches the network by surprise.
 */
import fs from 'node:fs';
import { AgentHarnessError } from '../errors/index.js';
import type { WireApiId } from '../model/wire-api.js';
import { KEY_VARIABLES, vendorKey } from './record.js';
import { loadCassette, type Cassette } from './schema.js';

/** A model mode as users give it: the protocol's modes and `auto`. */
export type ModelModeOption = 'scripted' | 'live' | 'record' | 'replay' | 'auto';

/** True for the modes that use a cassette (`record`, `replay`, `auto`). */
export function isCassetteMode(mode: unknown): mode is 'record' | 'replay' | 'auto' {
  return mode === 'record' || mode === 'replay' || mode === 'auto';
}

/** The cassette plan of an attempt. */
export type CassettePlan =
  | { mode: 'record'; file: string; upstream: string | null }
  | { mode: 'replay'; file: string; cassette: Cassette };

/** Options of {@link resolveCassettePlan}. */
export interface CassettePlanInput {
  mode: 'record' | 'replay' | 'auto';
  /** The cassette file (absolute); USAGE_ERROR when absent. */
  file: string | null | undefined;
  /** The engine's wire API (whose key recording needs). */
  wire: WireApiId;
  hostEnv: NodeJS.ProcessEnv;
  upstream?: string | null;
  /** Re-record even when the cassette exists (`auto` under Vitest's `-u`). */
  update?: boolean;
}

/** Checks an `--upstream` value: an http(s) URL without credentials or query. */
export function parseUpstream(value: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new AgentHarnessError('USAGE_ERROR', `--upstream must be an http(s) URL, not ${JSON.stringify(value)}.`);
  }
  if ((url.protocol !== 'http:' && url.protocol !== 'https:') || url.username || url.password || url.search)
    throw new AgentHarnessError(
      'USAGE_ERROR',
      `--upstream must be an http(s) origin with an optional path, without credentials or query, not ${JSON.stringify(value)}.`,
    );
  return url.toString().replace(/\/$/, '');
}

/** Decides record or replay; throws USAGE_ERROR, CASSETTE_NOT_FOUND, CASSETTE_INVALID or CASSETTE_KEY_MISSING. */
export function resolveCassettePlan(input: CassettePlanInput): CassettePlan {
  const { file } = input;
  if (!file)
    throw new AgentHarnessError(
      'USAGE_ERROR',
      `model mode "${input.mode}" needs a cassette file: pass --cassette FILE (or the cassette option).`,
    );
  let mode = input.mode;
  if (mode === 'auto') mode = fs.existsSync(file) && !input.update ? 'replay' : 'record';
  if (mode === 'replay') return { mode, file, cassette: loadCassette(file) };
  requireVendorKey(input.wire, input.hostEnv, file, (names) =>
    input.mode === 'auto'
      ? `No cassette at ${file} and no key to record one: set ${names} to record it against the vendor, or commit the cassette.`
      : `Recording ${file} calls the ${input.wire} vendor with your key, and ${names} is not set.`,
  );
  return { mode: 'record', file, upstream: input.upstream ? parseUpstream(input.upstream) : null };
}

/**
 * CASSETTE_KEY_MISSING, with `message(names of the key variables)`, unless the vendor key of `wire` is in `hostEnv`:
 * recording, or forking a replay onto the live model, calls the vendor with it.
 */
export function requireVendorKey(
  wire: WireApiId,
  hostEnv: NodeJS.ProcessEnv,
  file: string,
  message: (names: string) => string,
): void {
  if (vendorKey(wire, hostEnv)) return;
  throw new AgentHarnessError('CASSETTE_KEY_MISSING', message(KEY_VARIABLES[wire].join(' or ')), {
    details: { cassette: file, wire, variables: KEY_VARIABLES[wire] },
  });
}
