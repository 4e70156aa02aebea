/**
 * Which cassette mode an attempt runs in, decided before anything starts: `record` needs the user's key for the
 * engine's wire API, `replay` an existing valid cassette, and `auto` replays when the cassette exists, records when it
 * does not and a key is set, and otherwise fails: CI never reaches the network by surprise.
 */
import fs from 'node:fs';
import path from 'node:path';
import { AgentHarnessError } from '../errors/index.js';
import type { WireApiId } from '../model/wire-api.js';
import { assertCassetteWritable } from './cassette-file.js';
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

/**
 * Decides record or replay; throws USAGE_ERROR, CASSETTE_NOT_FOUND, CASSETTE_INVALID, CASSETTE_KEY_MISSING, or
 * INPUT_NOT_REGULAR_FILE / INPUT_TOO_LARGE for a cassette path that is no regular file or too large (cassette-file.ts).
 */
export function resolveCassettePlan(input: CassettePlanInput): CassettePlan {
  const { file } = input;
  if (!file)
    throw new AgentHarnessError(
      'USAGE_ERROR',
      `model mode "${input.mode}" needs a cassette file: pass --cassette FILE (or the cassette option).`,
    );
  let mode = input.mode;
  if (mode === 'auto') mode = fs.existsSync(file) && !input.update ? 'replay' : 'record';
  if (mode === 'replay') return { mode, file, cassette: loadCassette(file, input.hostEnv) };
  assertCassetteWritable(file);
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

/** Who continues a forked replay: the scripted model or the live one (docs/cassettes.md). */
export type ForkTarget = 'scripted' | 'live';

/** How a replay forks: after `at` model turns, onto the script or the live model (forwarded to `upstream`). */
export interface CassetteFork {
  at: number;
  to: ForkTarget;
  /** A live fork's origin (null: the vendor). */
  upstream: string | null;
  /** A live fork's output cassette (absolute), or null when the live part is not recorded. */
  output: string | null;
}

/** A fork as the user gives it (an attempt request's cassette: `--fork-at`, `--fork-to`, `--fork-cassette`). */
export interface CassetteForkInput {
  /** Replay: the first `forkAt` model turns come from the cassette, the following ones from `forkTo`. */
  forkAt?: number;
  /**
   * With `forkAt`: `scripted` (default) continues on the script; `live` forwards the rest to `upstream` (default: the
   * vendor) with the user's key from `hostEnv`, never stored.
   */
  forkTo?: ForkTarget;
  /**
   * With `forkTo: 'live'`: write the forked conversation (replayed part, then live part) to this cassette (relative to
   * the project root).
   */
  forkCassette?: string;
  /** Recording, and a live fork: where requests go (default: the vendor of the engine's wire API); the path is kept. */
  upstream?: string | null;
}

/** What {@link resolveCassetteFork} checks a fork against. */
export interface CassetteForkContext {
  /** The model mode asked for (named in the refusal of a fork of a recording). */
  mode: ModelModeOption;
  /** The engine's wire API (whose key a live fork needs). */
  wire: WireApiId;
  hostEnv: NodeJS.ProcessEnv;
  /** What a relative `forkCassette` is resolved against (the project root). */
  root: string;
}

/**
 * The fork of a replay, checked (a whole number of turns, replay only, a key for a live fork); undefined: none.
 * USAGE_ERROR or CASSETTE_KEY_MISSING otherwise.
 */
export function resolveCassetteFork(
  plan: CassettePlan,
  given: CassetteForkInput | undefined,
  context: CassetteForkContext,
): CassetteFork | undefined {
  const at = given?.forkAt;
  if (at === undefined) {
    if (given?.forkTo === 'live' || given?.forkCassette)
      throw new AgentHarnessError(
        'USAGE_ERROR',
        `${given.forkTo === 'live' ? '--fork-to live' : '--fork-cassette'} needs --fork-at N: the model turns replayed before the fork.`,
      );
    return undefined;
  }
  if (plan.mode !== 'replay' || !Number.isInteger(at) || at < 0)
    throw new AgentHarnessError(
      'USAGE_ERROR',
      plan.mode !== 'replay'
        ? `--fork-at forks a replay; the cassette ${plan.file} is being recorded (model mode ${context.mode}).`
        : `--fork-at must be a whole number of model turns, 0 or more, not ${at}.`,
    );
  const to = given?.forkTo ?? 'scripted';
  if (to !== 'scripted' && to !== 'live')
    throw new AgentHarnessError('USAGE_ERROR', `--fork-to must be scripted or live, not ${JSON.stringify(to)}.`);
  const output = given?.forkCassette ? path.resolve(context.root, given.forkCassette) : null;
  if (to === 'scripted') {
    if (output)
      throw new AgentHarnessError(
        'USAGE_ERROR',
        `--fork-cassette ${given?.forkCassette} records a fork onto the live model; add --fork-to live, or drop it.`,
      );
    return { at, to, upstream: null, output: null };
  }
  if (output === plan.file)
    throw new AgentHarnessError(
      'USAGE_ERROR',
      `--fork-cassette must be another file than the cassette replayed (${plan.file}).`,
    );
  if (output) assertCassetteWritable(output);
  const { wire } = context;
  requireVendorKey(
    wire,
    context.hostEnv,
    plan.file,
    (names) =>
      `Forking ${plan.file} onto the live model calls the ${wire} vendor with your key, and ${names} is not set.`,
  );
  return { at, to, upstream: given?.upstream ? parseUpstream(given.upstream) : null, output };
}

/** A replay's pace (absent: 0, served at once); USAGE_ERROR unless it is a finite number, 0 or more. */
export function resolveCassettePace(pace: number | undefined): number {
  const value = pace ?? 0;
  if (!Number.isFinite(value) || value < 0)
    throw new AgentHarnessError('USAGE_ERROR', `The cassette pace must be 0 or more, not ${value}.`);
  return value;
}
