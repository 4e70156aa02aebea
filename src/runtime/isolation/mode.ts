/**
 * The isolation an attempt asks for and the isolation it got (recorded in `meta.N.json` as `isolation`).
 */
import { AgentHarnessError } from '../../errors/index.js';
import type { IsolationMode } from '../../protocol/meta.js';
import { ISOLATION_MODE_VALUES } from '../../protocol/versions.js';

/** The environment variable that sets the default mode. */
export const ISOLATION_ENV = 'AGENT_HARNESS_ISOLATION';

/** The mode from an explicit option, else `AGENT_HARNESS_ISOLATION`, else `auto`; CONFIG_INVALID for anything else. */
export function resolveIsolationMode(
  explicit: string | undefined,
  env: NodeJS.ProcessEnv = process.env,
): IsolationMode {
  const raw = explicit ?? env[ISOLATION_ENV] ?? 'auto';
  // A check of three strings, not IsolationModeSchema: that would load the audit meta's schemas before an attempt.
  if (!(ISOLATION_MODE_VALUES as readonly string[]).includes(raw)) {
    throw new AgentHarnessError(
      'CONFIG_INVALID',
      `Isolation mode "${raw}"${explicit === undefined ? ` (from ${ISOLATION_ENV})` : ''} is not one of auto, require, off.`,
      { details: { value: raw } },
    );
  }
  return raw as IsolationMode;
}

/** What decides whether an attempt's namespace init may start before the attempt is prepared. */
export interface EarlyInitShape {
  /** Whether the engine's streams are split pipes (a terminal starts the init in its own terminal, later). */
  split: boolean;
  modelMode?: string | undefined;
  transport?: string | undefined;
  isolation?: string | undefined;
  env: NodeJS.ProcessEnv;
}

/**
 * Whether an attempt will likely prestart its namespace init with a closed stdin (split streams, a model server on
 * loopback, the native transport, isolation not off): then its init may start first (the CLI, before it loads the
 * attempt's code; runAttempt, while the attempt is prepared). The one rule for both.
 */
export function earlyInitFits(shape: EarlyInitShape): boolean {
  if (!shape.split || shape.modelMode === 'live' || shape.transport === 'acp') return false;
  return (shape.isolation ?? shape.env[ISOLATION_ENV]) !== 'off';
}
